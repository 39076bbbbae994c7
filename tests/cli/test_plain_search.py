"""A cold ``search`` with no service running loads no LlamaIndex and finds what the API finds.

The command line searches a local folder built with the default embedding through
``search.one_shot``: the search policy, fusion, context and gate of
``VideoIndex.search``, on plain rows read through Chroma's engine (issue 38: importing
``llama_index.core`` was most of a cold search). Each process below runs several
searches, then says which heavy modules it loaded; every search's hits (ids, times,
scores, confidence, context) must be those ``VideoIndex.search`` gives with the same
options. How long a cold search takes is ``benchmarks/cold_start.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from llama_index_video.index import VideoIndex
from tests.chapters.test_summaries import meeting_index  # noqa: F401  (the shared fixture)
from tests.chapters.test_topic_search import COLOURS
from tests.search.test_speaker_named import ASKED
from tests.store.test_speaker_names import index  # noqa: F401  (the fixture)

HEAVY = (
    "llama_index.core",
    "chromadb",
    "pydantic",
    "llama_index_video.index",
    "llama_index_video.querying",
    "llama_index_video.answering",
    "llama_index_video.agents",
)


def cold_searches(folder: Path, cases: list[list[str]]) -> tuple[list[list[dict]], list[str]]:
    """``search --json`` with each case's arguments, one after the other in one new
    process: what each printed, and which of ``HEAVY`` the process loaded."""
    code = (
        "import contextlib, io, json, sys\n"
        "from llama_index_video.cli.main import main\n"
        "printed = []\n"
        f"for argv in {cases!r}:\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        f"        code = main(['search', *argv, '--json', '--index', {str(folder)!r}])\n"
        "    assert code == 0, (argv, code)\n"
        "    printed.append(json.loads(out.getvalue()))\n"
        f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps([printed, loaded]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    printed, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return printed, loaded


def _api(folder: Path, embed_model, query: str, *, relevance="auto", **options) -> list[dict]:
    opened = VideoIndex(folder, embed_model=embed_model, relevance=relevance)
    try:
        return [hit.to_dict() for hit in opened.search(query, **options)]
    finally:
        opened.close()


def test_cold_searches_load_no_llama_index_and_find_the_apis_hits(example_index, embed_model):
    cases = [  # (query, its flags, the same as VideoIndex and search options)
        ("why does the stratosphere warm up", [], {}),
        ("What does the Y-axis of the whiteboard graph say?", ["--top-k", "3"], {"top_k": 3}),
        ("checkout cache", ["--modality", "transcript"], {"modalities": ["transcript"]}),
        ('"ozone layer" absorbs', [], {}),
        ("Who won the football world cup in 1998?", ["--relevance", "off"], {"relevance": None}),
        ("why is it warmer up there", ["--relevance", "standout"], {"relevance": "standout"}),
    ]
    printed, loaded = cold_searches(example_index.path, [[q, *flags] for q, flags, _ in cases])
    assert loaded == []
    for (query, _, options), hits in zip(cases, printed, strict=True):
        assert hits == _api(example_index.path, embed_model, query, **options), (query, options)
    assert printed[0] and printed[0][0]["source"].endswith("ozone_explainer.mp4")
    assert any(hit["frame_path"] for hits in printed for hit in hits)  # context frames too
    assert any(hit["context"] for hits in printed for hit in hits)
    assert all(hit["confidence"] is not None for hits in printed for hit in hits)


def test_cold_searches_by_speaker_and_by_named_speaker(index, embed_model):  # noqa: F811
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.close()
    argvs = [
        ["rain barrel", "--speaker", "Ben Okafor"],
        [ASKED, "--top-k", "9", "--by-named-speaker"],
        [ASKED, "--top-k", "9"],
    ]
    printed, loaded = cold_searches(index.path, argvs)
    assert loaded == []
    assert printed[0] == _api(index.path, embed_model, "rain barrel", speakers=["Ben Okafor"])
    assert printed[0] and {hit["speaker"] for hit in printed[0]} == {"Ben Okafor"}
    named = _api(index.path, embed_model, ASKED, top_k=9, by_named_speaker=True)
    assert printed[1] == named and {hit["speaker"] for hit in named} == {"Ben Okafor"}
    assert printed[2] == _api(index.path, embed_model, ASKED, top_k=9)


def test_cold_search_by_chapter(meeting_index, embed_model):  # noqa: F811
    folder = meeting_index[0].path
    printed, loaded = cold_searches(folder, [[COLOURS, "--by-chapter", "--top-k", "3"]])
    assert loaded == []
    hits = printed[0]
    assert hits == _api(folder, embed_model, COLOURS, top_k=3, by_chapter=True)
    assert hits and all(hit["chapter"] for hit in hits if hit["modality"] == "transcript")
