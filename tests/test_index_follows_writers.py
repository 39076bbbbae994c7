"""An app keeps a ``VideoIndex`` open while another process re-ingests a file in its folder.

Written the way a third-party app uses the library: one ``VideoIndex``, a retriever, a
query engine and an agent's tools made once and kept, and ``llama-index-video ingest``
run by someone else.
Once that ingest had replaced the file, the app's retriever found nothing (its loaded
vectors held only the old edition's rows, which the manifest no longer lists), a search
filtered by modality failed with chromadb's ``InternalError: Error finding id``, and so
on until the app called ``reopen()``; after which the retriever and the query engine it
had kept failed (they queried the Chroma that ``reopen`` dropped). Reads now load the
vectors afresh once another process's writer has finished, and what the app kept follows.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llama_index_video.agents import VideoToolSpec
from llama_index_video.index import VideoIndex

QUESTION = "how often is valve 12 checked"
SECTIONS = 40


def _manual(path: Path, edition: str) -> None:
    path.write_text(
        "\n\n".join(
            f"## Valve {n}\n\nIn the {edition} edition, valve {n} is checked every "
            f"{n % 9 + 1} days."
            for n in range(SECTIONS)
        )
    )


def _first_edition(path: Path, index_dir: Path) -> None:
    """The first edition, ingested in this process (quicker than another one), which
    then lets Chroma go, as if the app started afresh."""
    from llama_index_video.cli.main import main
    from llama_index_video.store.folder import IndexFolder

    _manual(path, "first")
    assert main(["ingest", str(path), "--index", str(index_dir), "--quiet"]) == 0
    IndexFolder(index_dir).release()


def _indexed_in_docs(tmp_path: Path) -> tuple[Path, Path]:
    """``docs/manual.md`` in its first edition, indexed: (the manual, the index folder)."""
    manual = tmp_path / "docs" / "manual.md"
    manual.parent.mkdir()
    index_dir = tmp_path / "index"
    _first_edition(manual, index_dir)
    return manual, index_dir


def _kept(app: VideoIndex) -> tuple[Any, Any, VideoToolSpec]:
    """What an app makes once and keeps: a retriever, a query engine, an agent's tools."""
    return app.as_retriever(similarity_top_k=3), app.as_query_engine(), VideoToolSpec(app)


def _ingest_elsewhere(spawn, path: Path, index_dir: Path) -> None:
    process = spawn("ingest", str(path), "--index", str(index_dir), "--quiet")
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out, err)


def _editions(texts: list[str]) -> set[str]:
    return {text.split(" edition")[0].rsplit(" ", 1)[-1] for text in texts}


def test_what_an_app_keeps_reads_the_file_another_process_replaced(spawn, tmp_path):
    manual, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir)
    try:
        retriever, engine, tools = _kept(app)
        found = retriever.retrieve(QUESTION)
        assert len(found) == 3 and _editions([n.node.get_content() for n in found]) == {"first"}

        _manual(manual, "second")
        _ingest_elsewhere(spawn, manual, index_dir)

        found = retriever.retrieve(QUESTION)
        assert len(found) == 3, [n.node.get_content() for n in found]
        assert _editions([n.node.get_content() for n in found]) == {"second"}
        hits = app.search(QUESTION, top_k=3, modalities=["text"])
        assert hits and _editions([hit.text for hit in hits]) == {"second"}
        response = engine.query(QUESTION)
        assert response.source_nodes
        assert _editions([n.node.get_content() for n in response.source_nodes]) == {"second"}
        moments = json.loads(tools.search_moments(QUESTION, top_k=3, modality="text"))["moments"]
        assert moments and _editions([moment["text"] for moment in moments]) == {"second"}
        assert [entry.moments for entry in app.library()] == [{"text": SECTIONS}]
    finally:
        app.close()


@pytest.mark.parametrize("snapshot_reads", [True, False])
def test_threads_searching_while_another_process_replaces_the_file(spawn, tmp_path, snapshot_reads):
    """The move to the version the other process finished waits for the searches in
    flight on other threads (it drops the Chroma or copy they query) and holds new ones
    back. Every search, filtered by modality too, is answered from the version before
    while the writer is at work, in place as from a copy (``snapshot_reads``): read in
    place, a filtered search met the rows the writer was adding (chromadb's ``Error
    finding id``, then ``IndexBusyError``, and the app had to search again)."""
    manual = tmp_path / "manual.md"
    index_dir = tmp_path / "index"
    _first_edition(manual, index_dir)
    app = VideoIndex(index_dir, snapshot_reads=snapshot_reads)
    done = threading.Event()
    errors: list[BaseException] = []
    last: dict[int, set[str]] = {}

    def search(number: int) -> None:
        for _ in range(5000):  # ends by count, or when the writer is done and followed
            try:
                hits = app.search(QUESTION, top_k=3, modalities=["text"])
            except BaseException as exc:
                errors.append(exc)
                return
            last[number] = _editions([hit.text for hit in hits])
            if len(hits) != 3 or len(last[number]) != 1:
                errors.append(AssertionError(f"not one version's 3 hits: {hits}"))
                return
            if done.is_set() and last[number] == {"second"}:
                return
            time.sleep(0.01)  # leaves the writer a core; nothing waits on it

    threads = [threading.Thread(target=search, args=(n,)) for n in range(2)]
    try:
        for thread in threads:
            thread.start()
        _manual(manual, "second")
        _ingest_elsewhere(spawn, manual, index_dir)
        done.set()
        for thread in threads:
            thread.join(timeout=300)
        assert errors == []
        assert last == {0: {"second"}, 1: {"second"}}
    finally:
        done.set()
        app.close()


def test_async_reads_hold_the_folders_lease(tmp_path, monkeypatch):
    """A kept retriever's ``aretrieve``, a kept query engine's ``aquery`` and ``aask``
    read the vectors without the folder's lease that their sync twins hold, so another
    thread of the app could move the index to a new version (deleting the copy they
    read) in the middle of them."""
    import asyncio

    from chromadb.api.models.Collection import Collection

    from llama_index_video.store.lease import folder_lease

    _manual_path, index_dir = _indexed_in_docs(tmp_path)
    app = VideoIndex(index_dir)
    held: list[bool] = []
    query = Collection.query

    def leased_query(collection, *args, **kwargs):  # search's one vector query
        held.append(folder_lease(index_dir).reading_here())
        return query(collection, *args, **kwargs)

    monkeypatch.setattr(Collection, "query", leased_query)
    try:
        retriever, engine, _tools = _kept(app)
        found = asyncio.run(retriever.aretrieve(QUESTION))
        assert _editions([n.node.get_content() for n in found]) == {"first"}
        assert held and all(held), held
        assert found == retriever.retrieve(QUESTION)
        held.clear()
        response = asyncio.run(engine.aquery(QUESTION))
        assert _editions([n.node.get_content() for n in response.source_nodes]) == {"first"}
        answer = asyncio.run(app.aask(QUESTION))
        assert answer.hits and _editions([hit.text for hit in answer.hits]) == {"first"}
        assert len(held) >= 2 and all(held), held
    finally:
        app.close()
