#!/usr/bin/env bash
# Create .venv and install the package with the extras given (default: local,offline).
# The default extras need no torch. Extras that do (visual, sentence-transformers, speakers, test, all)
# get the CPU torch wheel first: a plain 'torch' requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local,offline}"
python3 -m venv .venv
. .venv/bin/activate
# --no-compile: Python compiles what is imported on first use; compiling every module
# of every dependency up front (most are never imported) only slows the install.
python -m pip install --quiet --no-compile --upgrade pip
case ",${extras}," in
  *,visual,* | *,sentence-transformers,* | *,speakers,* | *,test,* | *,all,*)
    # PyTorch's CPU index (PyPI's Linux torch is the CUDA build); pip's own configured
    # indexes and find-links still apply, so a machine without that host finds a local
    # CPU wheel; one retry, not five, when the host is unreachable.
    python -m pip install --quiet --no-compile --retries 1 --timeout 15 \
      --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 ;;
esac
python -m pip install --quiet --no-compile -e ".[${extras}]"
