"""The served index, kept warm, and reopened when a separate ``ingest`` changes it.

The service never ingests: ``llama-index-video ingest`` runs in another process and
writes to the same folder. SQLite shows a long-lived reader every commit, but Chroma
does not: a ``PersistentClient`` keeps its vector index in memory and never sees rows
another process added (its counts change, its query results do not). So before each
request the service asks SQLite's ``PRAGMA data_version`` on its own read-only
connection to ``manifest.sqlite`` (a cheap in-memory check that changes whenever
another connection commits) and, if the manifest changed, reopens the index with the
same, already loaded, embedding model: about 40 ms, plus loading the vector index on
the next query.
Ingest marks a file ``indexed`` only after its nodes are written, so a reopen after
that mark sees them. Nothing here writes to the folder, so an index on a read-only
share, or owned by another user, is served (and followed) the same way.

Requests share the index concurrently (the embedding model and Chroma are safe to
query from several threads); a reopen waits for the requests in flight and holds new
ones back until it is done, so no query ever runs against a closed store.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.answering.answerer import AskOptions
from llama_index_video.results import Answer
from llama_index_video.service.media import MediaCatalog
from llama_index_video.store.manifest import connect_read_only
from llama_index_video.store.storage_errors import translated

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

    from llama_index_video.index import VideoIndex
    from llama_index_video.results import SearchHit

logger = logging.getLogger(__name__)

Answerer = Callable[["VideoIndex", str, int], Answer]
"""``answer(index, question, top_k) -> Answer``: how ``POST /api/ask`` answers."""

Reopen = Callable[[], "VideoIndex"]
"""Opens the index afresh (a new ``VideoIndex`` over the same folder)."""


def ask_with(llm: LLM | None = None) -> Answerer:
    """An answerer calling ``VideoIndex.ask`` with ``llm``; None answers extractively.

    The LLM is built once and shared by concurrent requests (the SDK clients behind
    this package's LLMs are thread-safe); its API key never leaves the server.
    """

    def answer(index: VideoIndex, question: str, top_k: int) -> Answer:
        return index.ask(question, llm=llm, options=AskOptions(top_k=top_k))

    return answer


class LiveIndex:
    """A ``VideoIndex`` shared by concurrent requests, reopened when the manifest changes.

    Args:
        index: The open index to serve. With ``reopen``, it is closed at the first
            reopen; :meth:`close` closes whichever index is current.
        reopen: Opens the same index afresh, so what a separate ``ingest`` added is
            found. None serves ``index`` as it is (restart to see new content).
        answer: How questions are answered; defaults to the extractive answer.
    """

    def __init__(
        self,
        index: VideoIndex,
        *,
        reopen: Reopen | None = None,
        answer: Answerer | None = None,
    ) -> None:
        self._index = index
        self._reopen = reopen
        self._answer = answer or ask_with(None)
        self._lease = _ReadWriteLease()
        self._watcher = _ManifestWatcher(index.path / "manifest.sqlite") if reopen else None
        self._catalog = self._new_catalog(index)

    @property
    def live(self) -> bool:
        """Whether content ingested after start-up is picked up without a restart."""
        return self._watcher is not None

    def search(
        self, query: str, *, top_k: int, modalities: Sequence[str] | None = None
    ) -> tuple[list[SearchHit], MediaCatalog]:
        """The index's hits for ``query``, and the catalog that serves their media."""
        with self.reading() as (index, catalog):
            return index.search(query, top_k=top_k, modalities=modalities), catalog

    def ask(self, question: str, *, top_k: int) -> tuple[Answer, MediaCatalog]:
        """The configured answerer's answer, and the catalog that serves its media."""
        with self.reading() as (index, catalog):
            return self._answer(index, question, top_k), catalog

    @contextmanager
    def reading(self) -> Iterator[tuple[VideoIndex, MediaCatalog]]:
        """Use the current index and media catalog; a reopen waits until this ends."""
        self.refresh()
        with self._lease.shared():
            yield self._index, self._catalog

    def refresh(self) -> bool:
        """Reopen the index if another process changed it since; True if reopened."""
        if self._watcher is None or self._reopen is None or not self._watcher.changed():
            return False
        with self._lease.exclusive():
            self._index.close()
            try:
                self._index = self._reopen()
            except BaseException:
                self._watcher.retry()
                raise
            self._catalog = self._new_catalog(self._index)
        logger.info("%s changed on disk; reopened the index", self._index.path)
        return True

    def close(self) -> None:
        """Close the index and the manifest watcher."""
        with self._lease.exclusive():
            self._index.close()
            if self._watcher is not None:
                self._watcher.close()

    @staticmethod
    def _new_catalog(index: VideoIndex) -> MediaCatalog:
        return MediaCatalog(index.manifest, index.path / "media" / "frames")


class _ManifestWatcher:
    """Notices commits to ``manifest.sqlite`` by other connections, without writing.

    Its connection is read-only, so a folder the service may not write (a read-only
    share, another user's folder) is watched too. There SQLite may have to read the
    file as immutable (it cannot create the ``-shm`` file it takes read locks in) and
    ``PRAGMA data_version`` never changes; or it reads the ``-wal`` through a private
    copy of the shared index it may not write, where ``data_version`` can move with no
    commit (seen in the full test suite, though not in isolation). So in a folder it
    may not write, the watcher compares the size and modification time of the manifest
    and its ``-wal`` file instead, which a writer that may write the folder (its owner's
    ``ingest``) changes when it commits.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with translated(path):
            self._db, immutable = connect_read_only(path)
        self._by_file_times = immutable or not os.access(path.parent, os.W_OK)
        self._lock = threading.Lock()
        self._version = self._read()

    def changed(self) -> bool:
        with self._lock:
            version = self._read()
            changed, self._version = version != self._version, version
            return changed

    def retry(self) -> None:
        """Report a change on the next call again (the reopen it caused failed)."""
        with self._lock:
            self._version = None

    def close(self) -> None:
        self._db.close()

    def _read(self) -> object:
        if self._by_file_times:
            return [_stat_or_none(Path(f"{self._path}{suffix}")) for suffix in ("", "-wal")]
        with translated(self._path):
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])


def _stat_or_none(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns


class _ReadWriteLease:
    """Many readers at once, or one writer; a waiting writer holds new readers back."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            self._cond.wait_for(lambda: not self._writer and not self._readers)
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()
