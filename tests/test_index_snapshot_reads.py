"""An app's ``VideoIndex`` answers from the last finished version while another process
is in the middle of a multi-file ingest.

The writer here is a real process ingesting two files through the library: the first
replaces a manual the app had indexed, and the run then stops before reading the second
(its progress callback waits for the test), holding the writer lock with the manual
already replaced. Reading the folder in place, the app found nothing of the manual until
the whole run ended (its old rows were deleted, its new ones unknown to the app's loaded
vector index), and a search filtered by recording or modality raised ``IndexBusyError``.
The app reads a private copy of the last finished version now: the first edition is
answered until the run ends, the second after.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from llama_index_video.index import VideoIndex
from tests.test_index_follows_writers import (
    QUESTION,
    SECTIONS,
    _editions,
    _indexed_in_docs,
    _kept,
    _manual,
)

HELD_WRITER = """
import sys, time
from pathlib import Path
from llama_index_video.index import VideoIndex

index_dir, gate, *paths = {argv!r}
gate = Path(gate)

def progress(path, stage, done, total):
    # hashing comes first for every file; reading later.md, after the manual is replaced
    if Path(path).name == "later.md" and stage != "hash" and not (gate / "go").exists():
        (gate / "held").touch()
        deadline = time.monotonic() + 120
        while not (gate / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

report = VideoIndex(index_dir).ingest(paths, progress=progress)
sys.exit(0 if report.ok else 1)
"""


def _held_writer(spawn, index_dir: Path, gate: Path, *paths: Path):
    """A process ingesting ``paths`` that holds the lock before reading ``later.md``."""
    gate.mkdir()
    argv = [str(index_dir), str(gate), *map(str, paths)]
    process = spawn(code=HELD_WRITER.format(argv=argv))
    deadline = time.monotonic() + 240
    while not (gate / "held").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the writer never reached the second file"
        time.sleep(0.05)
    return process


def _first_and_later(manual: Path) -> Path:
    later = manual.with_name("later.md")
    later.write_text("# Pumps\n\nThe circulation pump is serviced every spring.")
    return later


def test_an_app_answers_from_the_last_finished_version_during_a_long_ingest(spawn, tmp_path):
    manual, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir, snapshot_reads=True)
    try:
        retriever, engine, tools = _kept(app)
        assert _editions([n.node.get_content() for n in retriever.retrieve(QUESTION)]) == {"first"}

        _manual(manual, "second")
        writer = _held_writer(spawn, index_dir, tmp_path / "gate", manual, _first_and_later(manual))

        # The writer holds the lock, the manual's first edition is gone from the folder.
        found = retriever.retrieve(QUESTION)
        assert len(found) == 3 and _editions([n.node.get_content() for n in found]) == {"first"}
        for filters in ({}, {"modalities": ["text"]}, {"sources": [manual]}):
            hits = app.search(QUESTION, top_k=3, **filters)
            assert len(hits) == 3 and _editions([h.text for h in hits]) == {"first"}, filters
        response = engine.query(QUESTION)
        assert _editions([n.node.get_content() for n in response.source_nodes]) == {"first"}
        moments = json.loads(tools.search_moments(QUESTION, top_k=3, modality="text"))["moments"]
        assert moments and _editions([moment["text"] for moment in moments]) == {"first"}
        assert [entry.moments for entry in app.library()] == [{"text": SECTIONS}]

        (tmp_path / "gate" / "go").touch()
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, (out, err)

        found = retriever.retrieve(QUESTION)
        assert len(found) == 3 and _editions([n.node.get_content() for n in found]) == {"second"}
        hits = app.search(QUESTION, top_k=3, sources=[manual])
        assert _editions([h.text for h in hits]) == {"second"}
        assert sorted(Path(entry.source).name for entry in app.library()) == [
            "later.md",
            "manual.md",
        ]
    finally:
        app.close()


def test_nodes_an_app_inserts_through_the_index_reach_the_folder_by_default(tmp_path):
    """Snapshot reads are opt-in: with them the public ``index`` and ``vector_store``
    are the copy's, and nodes an app inserted through them (as LlamaIndex code does)
    were gone at ``close()`` while the insert reported nothing."""
    from llama_index.core.schema import TextNode

    _manual, index_dir = _indexed_in_docs(tmp_path)
    node = TextNode(text="The zebra crossing is repainted every March.", id_="app-node")
    app = VideoIndex(index_dir)
    try:
        app.index.insert_nodes([node])
    finally:
        app.close()
    reopened = VideoIndex(index_dir)
    try:
        kept = reopened.vector_store.get_nodes(node_ids=["app-node"])
    finally:
        reopened.close()
    assert [n.get_content() for n in kept] == [node.text]
