"""An app's ``VideoIndex`` answers from the last finished version while another process
is in the middle of a multi-file ingest, reading the folder in place (the default) or a
private copy of it (``snapshot_reads``).

The writer here is a real process ingesting two files through the library: the first
replaces a manual the app had indexed, and the run then stops before reading the second
(its progress callback waits for the test), holding the writer lock with the manual
already replaced. Reading the folder in place, the app found nothing of the manual until
the whole run ended (its old rows were deleted, its new ones unknown to the app's loaded
vector index), and a search filtered by recording or modality raised ``IndexBusyError``.
Now a writer deletes what it replaced only in its short commit step at the end of the
run, and a reader keeps the manifest as it was at the version it loaded: the first
edition is answered until the run ends, the second after, in place as from the copy.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.index import VideoIndex
from llama_index_video.store.lock import flock_within, readers_file
from tests.fakes.anthropic_server import text_reply
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

index_dir, gate, stops, *paths = {argv!r}
gate = Path(gate)
left = stops.split(",")

def stop(name):
    if name not in left:
        return
    left.remove(name)
    (gate / (name + ".held")).touch()
    deadline = time.monotonic() + 120
    while not (gate / (name + ".go")).exists() and time.monotonic() < deadline:
        time.sleep(0.05)

def progress(path, stage, done, total):
    # hashing comes first for every file, then manual.md is read, embedded and stored
    if Path(path).name == "manual.md" and stage == "text":
        stop("reading")  # the lock held, nothing of the new manual stored yet
    if Path(path).name == "manual.md" and stage == "embed" and done == total:
        stop("stored")  # its new rows are in, the manifest still lists the old ones
    if Path(path).name == "later.md" and stage != "hash":
        stop("replaced")  # the manual replaced in the manifest, the run not over

report = VideoIndex(index_dir).ingest(paths, progress=progress)
sys.exit(0 if report.ok else 1)
"""
STOPS = ("stored", "replaced")
"""Where the writer stops, in order: the manual's new rows stored, the manual replaced
(``reading``, before both: the manual being read, nothing of it stored)."""


def _held_writer(spawn, index_dir: Path, gate: Path, *paths: Path, stops=STOPS):
    """A process ingesting ``paths`` that holds the lock at each of ``stops`` until
    the test lets it go on (:func:`_reached`)."""
    gate.mkdir()
    argv = [str(index_dir), str(gate), ",".join(stops), *map(str, paths)]
    return spawn(code=HELD_WRITER.format(argv=argv))


def _reached(writer, gate: Path, stop: str) -> None:
    """Wait until the writer holds at ``stop``."""
    deadline = time.monotonic() + 240
    while not (gate / f"{stop}.held").exists():
        assert writer.poll() is None, writer.communicate()
        assert time.monotonic() < deadline, f"the writer never reached {stop}"
        time.sleep(0.05)


def _first_and_later(manual: Path) -> Path:
    later = manual.with_name("later.md")
    later.write_text("# Pumps\n\nThe circulation pump is serviced every spring.")
    return later


def _answered_from(app: VideoIndex, kept, claude: ClaudeMultimodalLLM, manual: Path) -> str:
    """The one edition of the manual every read of the app answers from, each read
    whole (three moments): a kept retriever, searches unfiltered and filtered by
    modality and by recording, a kept query engine, an agent's tool, ``ask`` through the
    Anthropic stand-in; and the library lists the manual's moments."""
    retriever, engine, tools = kept
    editions = []
    found = retriever.retrieve(QUESTION)
    assert len(found) == 3, [n.node.get_content() for n in found]
    editions.append(_editions([n.node.get_content() for n in found]))
    for filters in ({}, {"modalities": ["text"]}, {"sources": [manual]}):
        hits = app.search(QUESTION, top_k=3, **filters)
        assert len(hits) == 3, (filters, hits)
        editions.append(_editions([h.text for h in hits]))
    response = engine.query(QUESTION)
    assert len(response.source_nodes) >= 3
    editions.append(_editions([n.node.get_content() for n in response.source_nodes]))
    moments = json.loads(tools.search_moments(QUESTION, top_k=3, modality="text"))["moments"]
    assert len(moments) == 3
    editions.append(_editions([moment["text"] for moment in moments]))
    answer = app.ask(QUESTION, llm=claude)
    assert answer.found and len(answer.hits) >= 3, answer
    editions.append(_editions([hit.text for hit in answer.hits]))
    assert {"text": SECTIONS} in [entry.moments for entry in app.library()]
    assert all(len(edition) == 1 for edition in editions) and len(set.union(*editions)) == 1, (
        editions
    )
    return editions[0].pop()


@pytest.mark.parametrize("snapshot_reads", [False, True])
def test_an_app_answers_from_the_last_finished_version_during_a_long_ingest(
    spawn, tmp_path, fake_anthropic, snapshot_reads
):
    manual, index_dir = _indexed_in_docs(tmp_path)
    gate = tmp_path / "gate"
    app = VideoIndex(index_dir, snapshot_reads=snapshot_reads)
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, max_retries=0, timeout=30.0
    )
    try:
        kept = _kept(app)
        assert _answered_from(app, kept, claude, manual) == "first"

        _manual(manual, "second")
        writer = _held_writer(spawn, index_dir, gate, manual, _first_and_later(manual))
        for stop in STOPS:
            _reached(writer, gate, stop)
            assert _answered_from(app, kept, claude, manual) == "first", stop
            assert [Path(entry.source).name for entry in app.library()] == ["manual.md"]
            (gate / f"{stop}.go").touch()
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, (out, err)

        assert _answered_from(app, kept, claude, manual) == "second"
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


def _whole_edition(app: VideoIndex, retriever, manual: Path) -> str:
    """The one edition a kept retriever (filtered by modality: one made before a writer
    began met the rows it adds) and searches (plain and by recording) answer from, each
    with three moments."""
    found = [n.node.get_content() for n in retriever.retrieve(QUESTION)]
    texts = [
        found,
        *(
            [h.text for h in app.search(QUESTION, top_k=3, **filters)]
            for filters in ({}, {"sources": [manual]})
        ),
    ]
    assert all(len(moments) == 3 for moments in texts), texts
    editions = set.union(*map(_editions, texts))
    assert len(editions) == 1, texts
    return editions.pop()


def test_the_run_after_a_killed_writer_deletes_what_it_replaced_only_in_its_commit_step(
    spawn, tmp_path
):
    """A writer killed after replacing the manual left the old edition's rows to the
    next run's clean-up, which deleted them at once, under an app still reading the
    version before the killed run (it found no moment of the manual until that run
    ended). They now go in the next run's commit step, after the reads in progress."""
    manual, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir)
    try:
        retriever = app.as_retriever(similarity_top_k=3, modalities=["text"])
        assert _whole_edition(app, retriever, manual) == "first"
        _manual(manual, "second")
        later = _first_and_later(manual)
        killed = _held_writer(spawn, index_dir, tmp_path / "killed", manual, later)
        _reached(killed, tmp_path / "killed", "stored")
        (tmp_path / "killed" / "stored.go").touch()
        _reached(killed, tmp_path / "killed", "replaced")
        killed.kill()
        killed.communicate(timeout=60)
        assert _whole_edition(app, retriever, manual) == "first"

        gate = tmp_path / "next"
        following = _held_writer(spawn, index_dir, gate, manual, later)
        _reached(following, gate, "replaced")  # its clean-up done, reading later.md
        assert _whole_edition(app, retriever, manual) == "first"
        (gate / "replaced.go").touch()
        out, err = following.communicate(timeout=240)
        assert following.returncode == 0, (out, err)

        assert _whole_edition(app, retriever, manual) == "second"
        check, _report = app.verify()
        assert check.ok, check
    finally:
        app.close()


def test_aask_answers_from_the_version_it_caught_up_with(spawn, tmp_path, monkeypatch):
    """``aask`` caught up with the writers, made its answerer, and only then took the
    folder's read in a worker thread: a commit step that ran in between deleted the
    rows of the version it had caught up with (it found nothing of the manual). It now
    catches up, answers and retrieves inside one read, as ``ask`` does."""
    from llama_index_video.store.lock import committing

    manual, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir)
    answerer = app.answerer

    def between(**options):  # made; then the writer goes on to its commit step, or its end
        made = answerer(**options)
        (gate / "replaced.go").touch()
        deadline = time.monotonic() + 240
        while not committing(index_dir) and writer.poll() is None:
            assert time.monotonic() < deadline, "the writer never reached its commit step"
            time.sleep(0.02)
        return made

    try:
        assert _editions([hit.text for hit in asyncio.run(app.aask(QUESTION)).hits]) == {"first"}
        _manual(manual, "second")
        gate = tmp_path / "gate"
        writer = _held_writer(spawn, index_dir, gate, manual, _first_and_later(manual))
        _reached(writer, gate, "stored")
        (gate / "stored.go").touch()
        _reached(writer, gate, "replaced")
        monkeypatch.setattr(app, "answerer", between)
        answer = asyncio.run(app.aask(QUESTION))
        assert answer.found and len(answer.hits) >= 3, answer
        assert _editions([hit.text for hit in answer.hits]) == {"first"}
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, (out, err)
        answer = asyncio.run(app.aask(QUESTION))
        assert _editions([hit.text for hit in answer.hits]) == {"second"}
    finally:
        app.close()


def test_ask_holds_no_read_while_the_model_answers(tmp_path, fake_anthropic):
    """A sync ``ask`` and a kept query engine's ``query`` held the folder's read (and
    so ``read.lock``) through the model's call: a writer's commit step waited for the
    model, up to 30 s. The folder is now read first; the model answers from that."""
    _manual_path, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir)
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, max_retries=0, timeout=60.0
    )
    answering, go = threading.Event(), threading.Event()

    def respond(_body):  # the model, answering once the test has looked
        answering.set()
        go.wait(240)
        return text_reply("Every 4 days.")

    fake_anthropic.respond = respond
    engine = app.as_query_engine(llm=claude)
    asks = {
        "ask": lambda: app.ask(QUESTION, llm=claude).hits,
        "query": lambda: engine.query(QUESTION).metadata["answer"].hits,
    }
    try:
        for name, ask in asks.items():
            answering.clear()
            go.clear()
            with ThreadPoolExecutor(1) as pool:
                asked = pool.submit(ask)
                assert answering.wait(240), asked.exception()
                readers = readers_file(index_dir)
                assert readers is not None
                try:  # as a writer's commit step takes it
                    free = flock_within(readers, fcntl.LOCK_EX, 0)
                finally:
                    os.close(readers)
                go.set()
                hits = asked.result(timeout=240)
            assert free, f"{name} held read.lock while the model answered"
            assert len(hits) >= 3 and _editions([hit.text for hit in hits]) == {"first"}, name
    finally:
        go.set()
        app.close()


@pytest.mark.parametrize("snapshot_reads", [False, True])
def test_an_index_opened_while_a_writer_is_at_work_answers_from_its_first_read(
    spawn, tmp_path, snapshot_reads
):
    """An index opened while another process's writer held the lock read the folder
    unprotected until that writer finished: once the writer had replaced the manual, a
    search found nothing of it (the vectors it had loaded knew none of the new rows, the
    manifest no longer listed the old ones), and one by recording raised
    ``IndexBusyError``. It now holds the manifest from its first read, before its vectors
    load, and answers from that version until the writer has finished."""
    manual, index_dir = _indexed_in_docs(tmp_path)
    _manual(manual, "second")
    gate = tmp_path / "gate"
    later = _first_and_later(manual)
    writer = _held_writer(spawn, index_dir, gate, manual, later, stops=("reading", "replaced"))
    _reached(writer, gate, "reading")
    app = VideoIndex(index_dir, snapshot_reads=snapshot_reads)  # no copy can be made yet
    try:
        retriever = app.as_retriever(similarity_top_k=3, modalities=["text"])
        assert _whole_edition(app, retriever, manual) == "first"
        (gate / "reading.go").touch()
        _reached(writer, gate, "replaced")
        assert _whole_edition(app, retriever, manual) == "first"
        assert [Path(entry.source).name for entry in app.library()] == ["manual.md"]
        (gate / "replaced.go").touch()
        out, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, (out, err)
        assert _whole_edition(app, retriever, manual) == "second"
    finally:
        app.close()
