"""The served index, kept warm, and moved to each new version a separate ``ingest`` makes.

The service never ingests: ``llama-index-video ingest`` runs in another process and
writes to the same folder, while the service keeps answering. It never reads the
folder in place while a writer may change it: Chroma's rows would change under its
loaded vector index (a filtered query then fails with chromadb's ``Error finding id``),
and a reload in the middle of a run would load a writer's half-done state (a file
being replaced has its old rows deleted before the lock is released; the vector index
files are rewritten as they grow). So it serves a *snapshot*
(:mod:`llama_index_video.store.snapshot`): a private copy of the folder as the last
finished writer left it. Before each request it reads the folder's write generation
(one small read of ``write.lock``); when a writer has *finished* a new one, it copies
that version and opens it with the same, already loaded, embedding model, then serves
it. While a writer runs, or after one was killed (until the next one finishes), the
generation is unknown and the previous complete version goes on being served. A new
version that cannot be opened is logged in one line and tried again later; the
previous one goes on being served. With vectors on a Chroma server there is no folder
to copy: the index is reopened in place when a writer has finished.

Nothing here writes to the index folder, so an index on a read-only share, or owned by
another user, is served (and followed) the same way.

Requests share the index concurrently (the embedding model and Chroma are safe to
query from several threads); a reopen waits for the requests in flight and holds new
ones back until it is done, so no query ever runs against a closed store.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.answering.answerer import AnswerStream, AskOptions
from llama_index_video.errors import MomentRequestError, VideoIndexError
from llama_index_video.results import Answer
from llama_index_video.service.media import MediaCatalog
from llama_index_video.store.lease import ReadWriteLease
from llama_index_video.store.lock import read_generation
from llama_index_video.store.snapshot import Snapshot, take_snapshot
from llama_index_video.store.storage_errors import translated

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

    from llama_index_video.index import VideoIndex
    from llama_index_video.results import SearchHit

logger = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
"""How long a new version that could not be opened waits before it is tried again."""

Answerer = Callable[["VideoIndex", str, int], Answer]
"""``answer(index, question, top_k) -> Answer``: how ``POST /api/ask`` answers. One with
a ``stream(index, question, top_k) -> AnswerStream`` method (:class:`AskWith`) also
streams ``POST /api/ask/stream`` as the model writes; any other sends its answer as
one piece. Only :class:`AskWith` also takes filters (``languages``, ``speakers``,
``by_named_speaker``: ``POST /api/ask``'s ``language``, ``speaker`` and
``by_named_speaker``), passed on to ``VideoIndex.ask``."""

Opener = Callable[[Path], "VideoIndex"]
"""``open_index(folder) -> VideoIndex``: opens the index in ``folder`` (a snapshot, or
the index folder itself) with the served index's model and settings."""


class AskWith:
    """An answerer calling ``VideoIndex.ask`` with ``llm`` (None answers extractively),
    and streaming the same answer with :meth:`stream`.

    The LLM is built once and shared by concurrent requests (the SDK clients behind
    this package's LLMs are thread-safe); its API key never leaves the server.
    """

    def __init__(self, llm: LLM | None = None) -> None:
        self.llm = llm

    def __call__(self, index: VideoIndex, question: str, top_k: int, **filters: Any) -> Answer:
        """``filters``: ``languages``, ``speakers``, ``by_named_speaker``, as
        ``VideoIndex.ask`` takes them."""
        return index.ask(question, llm=self.llm, options=AskOptions(top_k=top_k), **filters)

    def stream(self, index: VideoIndex, question: str, top_k: int, **filters: Any) -> AnswerStream:
        """The answer's text as the model writes it; the checked answer at its end."""
        options = AskOptions(top_k=top_k)
        return index.answerer(llm=self.llm, options=options, **filters).stream(question)


def ask_with(llm: LLM | None = None) -> AskWith:
    """An answerer calling ``VideoIndex.ask`` with ``llm``; None answers extractively."""
    return AskWith(llm)


class IndexVersions:
    """The versions of the index folder ``index_dir`` the service serves, one per
    finished writer (see the module docstring).

    Args:
        index_dir: The index folder.
        open_index: Opens the index in a folder.
        snapshots: Serve private copies (a local Chroma folder); False: reopen
            ``index_dir`` itself (vectors on a Chroma server).
    """

    def __init__(self, index_dir: Path, open_index: Opener, *, snapshots: bool = True) -> None:
        self.index_dir = index_dir
        self._open = open_index
        self._snapshots = snapshots
        self._generation: int | None = None
        self._served: Snapshot | None = None
        self._retired: list[Snapshot] = []
        self._not_before = 0.0

    @classmethod
    def of_folder(cls, index_dir: Path, **index_options: Any) -> IndexVersions:
        """The versions of ``index_dir``, each opened as ``VideoIndex(copy,
        **index_options)`` with the models of the one before (loaded once)."""
        from llama_index_video.index import VideoIndex

        opened: list[VideoIndex] = []

        def open_index(path: Path) -> VideoIndex:
            if opened and path == index_dir:  # vectors on a Chroma server: reopened in place
                opened[0].reopen()
                return opened[0]
            models: dict[str, Any] = (
                {"embed_model": opened[0].embed_model, "visual_model": opened[0].visual_model}
                if opened
                else {}
            )
            index = VideoIndex(path, **models, **index_options)
            opened[:1] = [index]
            return index

        return cls(index_dir, open_index, snapshots=index_options.get("chroma_url") is None)

    def first(self) -> VideoIndex:
        """The newest complete version; the folder as it is if a writer is at work, or
        if it cannot be copied (replaced by the first version a writer finishes)."""
        try:
            index = self._next()
        except (OSError, sqlite3.Error) as exc:
            logger.warning(
                "%s: cannot copy it (%s); serving the folder as it is", self.index_dir, exc
            )
            index = None
        return self._open(self.index_dir) if index is None else index

    def changed(self) -> bool:
        """Whether a writer has finished a version newer than the one served."""
        generation = read_generation(self.index_dir)
        return (
            generation is not None
            and generation != self._generation
            and time.monotonic() >= self._not_before
        )

    def next(self) -> VideoIndex | None:
        """The newest complete version, opened; None: none now (a writer started),
        keep the one served.

        Raises:
            Exception: the version could not be copied or opened (tried again after
                :data:`RETRY_SECONDS`; a copy dropped because a writer started is
                tried again as soon as that writer has finished).
        """
        try:
            return self._next()
        except BaseException:
            self._not_before = time.monotonic() + RETRY_SECONDS
            raise

    def retire(self) -> None:
        """Delete the copies no longer served (their index was closed)."""
        while self._retired:
            self._retired.pop().discard()

    def close(self) -> None:
        """Delete every copy (the indexes opened from them were closed)."""
        if self._served is not None:
            self._retired.append(self._served)
            self._served = None
        self.retire()

    def _next(self) -> VideoIndex | None:
        if not self._snapshots:
            generation = read_generation(self.index_dir)
            index = self._open(self.index_dir)
            self._generation = generation
            return index
        snapshot = take_snapshot(self.index_dir)
        if snapshot is None:
            return None
        try:
            index = self._open(snapshot.folder)
        except BaseException:
            snapshot.discard()
            raise
        if self._served is not None:
            self._retired.append(self._served)
        self._served, self._generation = snapshot, snapshot.generation
        return index


class LiveIndex:
    """A ``VideoIndex`` shared by concurrent requests, moved to each new version.

    Args:
        index: The open index to serve. :meth:`close` closes whichever index is
            current (an index a new version replaces is closed then).
        versions: Where new versions come from, so what a separate ``ingest`` added
            is found. None serves ``index`` as it is (restart to see new content).
        answer: How questions are answered; defaults to the extractive answer.
    """

    def __init__(
        self,
        index: VideoIndex,
        *,
        versions: IndexVersions | None = None,
        answer: Answerer | None = None,
    ) -> None:
        self._index = index
        self._versions = versions
        self._answer = answer or ask_with(None)
        self._lease = ReadWriteLease()
        self._moving = threading.Lock()
        self._catalog = self._new_catalog(index)

    @property
    def live(self) -> bool:
        """Whether content ingested after start-up is picked up without a restart."""
        return self._versions is not None

    def search(
        self, query: str, *, top_k: int, **options: Any
    ) -> tuple[list[SearchHit], MediaCatalog]:
        """The index's hits for ``query`` (``options``: :meth:`VideoIndex.search`'s),
        and the catalog that serves their media."""
        with self.reading() as (index, catalog), translated(index.folder.chroma):
            return index.search(query, top_k=top_k, **options), catalog

    def ask(self, question: str, *, top_k: int, **filters: Any) -> tuple[Answer, MediaCatalog]:
        """The configured answerer's answer (``filters``: :class:`AskWith`'s, those not
        given or empty: any), and the catalog that serves its media."""
        with self.reading() as (index, catalog), translated(index.folder.chroma):
            return self._answer(index, question, top_k, **self._asked(filters)), catalog

    @contextmanager
    def streaming(
        self, question: str, *, top_k: int, **filters: Any
    ) -> Iterator[tuple[AnswerStream, MediaCatalog]]:
        """The answer to ``question`` as it is written, to be read inside the block (the
        version it answers from stays served until the block ends), and the catalog
        that serves its media. An answerer that cannot stream gives its answer whole."""
        within = self._asked(filters)
        with self.reading() as (index, catalog), translated(index.folder.chroma):
            stream = getattr(self._answer, "stream", None)
            if stream is not None:
                yield stream(index, question, top_k, **within), catalog
                return
            answer = self._answer(index, question, top_k, **within)
            yield AnswerStream(iter([answer.text]), lambda _text: answer), catalog

    def _asked(self, filters: dict[str, Any]) -> dict[str, Any]:
        """The filters asked for (only :class:`AskWith` takes them; another answerer
        asked for one is a request error)."""
        asked = {name: value for name, value in filters.items() if value}
        if asked and not isinstance(self._answer, AskWith):
            raise MomentRequestError(
                f"{', '.join(asked)}: this service's answerer takes no such filter"
            )
        return asked

    @contextmanager
    def reading(self) -> Iterator[tuple[VideoIndex, MediaCatalog]]:
        """Use the current index and media catalog; a reopen waits until this ends."""
        self.refresh()
        with self._lease.shared():
            yield self._index, self._catalog

    def refresh(self) -> bool:
        """Move to the newest version a writer finished, if newer than the one served;
        True if it moved. A version that cannot be opened leaves the current one
        served (one warning line; tried again later)."""
        versions = self._versions
        if versions is None or not versions.changed():
            return False
        with self._moving:  # one request opens the new version; the others go on reading
            if not versions.changed():
                return False
            try:
                index = versions.next()
            except Exception as exc:  # whatever it is, the version served stays good
                logger.warning(
                    "%s: its new version cannot be opened (%s); still serving the previous "
                    "one, trying again in %.0f s",
                    versions.index_dir,
                    _one_line(exc),
                    RETRY_SECONDS,
                )
                return False
            if index is None:
                return False
            catalog = self._new_catalog(index)
            with self._lease.exclusive():
                old, self._index, self._catalog = self._index, index, catalog
            if old is not index:
                old.close()
            versions.retire()
        logger.info("%s changed on disk; serving its new version", versions.index_dir)
        return True

    def close(self) -> None:
        """Close the index and delete the copies it was served from."""
        with self._lease.exclusive():
            self._index.close()
            if self._versions is not None:
                self._versions.close()

    @staticmethod
    def _new_catalog(index: VideoIndex) -> MediaCatalog:
        return MediaCatalog(index.manifest, index.folder.frames)


def _one_line(exc: Exception) -> str:
    text = str(exc) if isinstance(exc, VideoIndexError) else f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0] if text else type(exc).__name__
