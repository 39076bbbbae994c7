"""``search`` and ``ask`` are run dozens of times while exploring: they load what answering
from an index needs, never a media decoder, a speech model, OCR, speaker clustering,
torch, or the tokenizer of LlamaIndex's default text splitter (issue 13: cold search time
is mostly imports)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "av",
    "torch",
    "transformers",
    "sentence_transformers",
    "faster_whisper",
    "ctranslate2",
    "rapidocr_onnxruntime",
    "cv2",
    "scipy",
    "resemblyzer",
    "tiktoken",  # LlamaIndex's default SentenceSplitter: our indexes never split documents
)
SEARCH_ALSO = ("chromadb",)  # search reads a local folder through Chroma's engine alone


@pytest.mark.parametrize("command", ["search", "ask"])
def test_search_and_ask_import_no_media_speech_or_torch_stack(example_index, command):
    watched = HEAVY + SEARCH_ALSO
    code = (
        "import json, sys\n"
        "from llama_index_video.cli.main import main\n"
        f"code = main([{command!r}, 'why does the stratosphere warm up', "
        f"'--index', {str(example_index.path)!r}, '--json'])\n"
        f"print(json.dumps([code, sorted(m for m in {watched!r} if m in sys.modules)]), "
        "file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    exit_code, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert exit_code == 0, done.stderr
    assert "ozone_explainer.mp4" in done.stdout  # it did search
    assert [m for m in loaded if command == "search" or m not in SEARCH_ALSO] == []
    if command == "search":  # cold, no service running: the API's hits all the same
        expected = example_index.search("why does the stratosphere warm up")
        assert json.loads(done.stdout) == [hit.to_dict() for hit in expected]
