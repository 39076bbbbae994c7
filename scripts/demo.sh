#!/usr/bin/env bash
# Index the bundled example media and ask it a question, offline, on the default local models
# (no torch: speech on CTranslate2, OCR and the text embedding on ONNX Runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh local,offline
. .venv/bin/activate
llama-index-video ingest examples/media --index video_index
llama-index-video ask "Why does the temperature rise with altitude in the stratosphere?" --index video_index
