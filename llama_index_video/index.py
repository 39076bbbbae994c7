"""``VideoIndex``: an index folder you can ingest into, search and ask.

The folder holds a Chroma collection (``chroma/``), the frames (``media/``) and a
manifest (``manifest.sqlite``) that makes ingest incremental and records which
embedding model built the index, so opening it with another model fails clearly
instead of returning wrong results. Any LlamaIndex vector store can replace Chroma.
Frame and clip paths are stored relative to the folder, so it works from any working
directory and can be moved or copied (:mod:`llama_index_video.store.media_paths`).

Only one process writes at a time (``ingest`` and ``verify(repair=True)`` take the
folder's writer lock, :mod:`llama_index_video.store.lock`); any number read, and see
only files whose moments are completely written. A folder this process may not write
is opened read-only: search and ask work, ingest fails with one line.

Reading in place (the default), an index answers from the version its vectors were
loaded at while another process's writer is at work: it holds the manifest as it was
then (:meth:`~llama_index_video.store.manifest.Manifest.hold`) and keeps its vector
queries to that version's contents, since the rows the writer adds are unknown to the
loaded vector index (a filtered query met them); the writer deletes what it replaced
only in its commit step at the end of the run, after the reads in progress, and a read
waits for that step (:mod:`llama_index_video.store.lock`). An index opened while a
writer is at work holds the manifest as it is at its first read, which loads the
vectors after. Once the writer has finished, the next read loads the vectors afresh.

With ``snapshot_reads=True``, an index reads a *snapshot* instead
(:mod:`llama_index_video.store.snapshot`): a private copy of the folder as the last
finished writer left it, moved to each new finished version at the next read; it never
waits for a writer. Its own writes (``ingest``, ``remove``, ...) go to the folder in
place, and its next read copies the version they made. It is not the default: the copy
costs its size and time at every new version, and the public ``vector_store`` and
``index`` are then the copy's: nodes an app inserts through them directly would be
written to the copy and lost at ``close()``. One-shot readers (the CLI's ``search``)
read in place, and read again when a writer changed the folder under them
(:mod:`llama_index_video.cli.reads`).

``VideoIndex`` inherits each side of the facade from the module that says it:
searching and asking from :mod:`llama_index_video.querying` (every search and answer
goes through the index's search policy, :mod:`llama_index_video.search.policy`: its
channels, weights, thresholds and gate), what one recording holds from
:mod:`llama_index_video.recordings`, naming voices from :mod:`llama_index_video.naming`,
``ingest``, ``remove`` and ``prune`` from :mod:`llama_index_video.writing`, ``verify``
and ``check_store`` from :mod:`llama_index_video.verifying`. This module opens the
folder: its settings, the vector stores (reopened when another writer wrote since) and
the writer lock every writer holds. Where frame vectors are kept is explained in
:mod:`llama_index_video.store.visual`.
"""

from __future__ import annotations

import logging
import sqlite3
import warnings
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_video._moved import moved
from llama_index_video.embeddings.capabilities import embeds_clips
from llama_index_video.embeddings.identity import embedding_identity
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.querying import Querying
from llama_index_video.search.lexical import LEXICAL_THRESHOLD
from llama_index_video.search.policy import (
    DEFAULT_CALIBRATIONS,
    DEFAULT_THRESHOLDS,
    DEFAULT_VISUAL_THRESHOLDS,
    gate_for,
    threshold_for,
    weights_for,
)
from llama_index_video.search.relevance import Gate
from llama_index_video.store.collection import (
    DEFAULT_COLLECTION,
    collection_name,
    is_read_only_copy,
    open_chroma,
    releases,
    server_answering,
)
from llama_index_video.store.folder import (
    CHROMA_URL_META,
    COLLECTION_META,
    SPEC_META,
    IndexFolder,
    check_compatible,
)
from llama_index_video.store.folder_index import (
    FolderMultiModalVectorStoreIndex,
    FolderVectorStoreIndex,
    embedding_only,
)
from llama_index_video.store.lease import folder_lease
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.lock import WriterLock, read_generation, wait_for_commit
from llama_index_video.store.manifest import Manifest
from llama_index_video.store.snapshot import Snapshot, take_snapshot
from llama_index_video.store.storage_errors import read_only, translated
from llama_index_video.store.visual import (
    FRAMES_COLLECTION,
    VISUAL_META,
    visual_model_for,
)
from llama_index_video.verifying import Verifying

if TYPE_CHECKING:
    from llama_index.core.embeddings import MultiModalEmbedding
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.reader.options import ReaderOptions
    from llama_index_video.reader.video_reader import VideoReader

logger = logging.getLogger(__name__)

DEFAULT_INDEX_DIR = Path("video_index")


class VideoIndex(Verifying, Querying):
    """An index folder of video, audio and text moments.

    Args:
        path: The index folder (created if missing).
        embed_model: Any LlamaIndex embedding; defaults to the local all-MiniLM-L6-v2.
        vector_store: Any LlamaIndex vector store; defaults to Chroma inside ``path``.
        reader_options: What to read from each file and how (transcriber, subtitles,
            frames, OCR engine, speakers, ...); the index builds its ``VideoReader`` from
            them on first ingest, writing frames and clips to ``path/media`` and cutting
            clips only when its embedding embeds them natively. Default:
            ``ReaderOptions()``.
        reader: A ready ``VideoReader`` instead of ``reader_options``, for a reader
            subclass or one shared between indexes; it decides on clips itself.
        threshold: Minimum cosine similarity of a hit. ``"auto"`` uses the calibrated
            value for the default model, and no threshold for other models.
        collection: Name of the Chroma collection; None: the one recorded in the folder,
            else ``video_moments``. Name one per index when several share a server.
        chroma_url: A Chroma server (``http://host:8000``) holding the collections instead
            of ``path/chroma``; the folder keeps the manifest and frames. Recorded at
            ingest, so later opens of ``path`` find the server without it. Credentials
            come from the environment (see :mod:`llama_index_video.store.collection`).
        visual_model: A ``MultiModalEmbedding`` (e.g. ``ClipEmbedding()``) that embeds
            frames by their pixels, for visual search; set when the folder is created.
            ``None``: the model the folder was built with, if any.
        frame_store: Where frame vectors go; defaults to the Chroma collection
            ``video_frames`` inside ``path``. It must store nodes (``stores_text``).
        visual_threshold: Minimum text-to-image cosine similarity of a visual hit;
            ``"auto"``: the default for the model (see ``DEFAULT_VISUAL_THRESHOLDS``).
        weights: Fusion weights per channel (modality or ``"visual"``), overriding
            ``DEFAULT_WEIGHTS``; 0 leaves a channel out.
        relevance: When a query's hits are relevant enough to answer from (a
            ``ConfidenceGate`` or ``RelevanceGate``); ``"auto"``: the default gate of the
            model (``DEFAULT_GATES``: the best hit's confidence); ``"standout"``: the
            model's calibrated standout gate (``STANDOUT_GATES``; ``ValueError`` for a
            model without one); None: every hit above the threshold. Hits carry a
            ``confidence`` whatever the gate, when the model has a calibration
            (``DEFAULT_CALIBRATIONS``).
        lexical: Search by the query's exact words too (the lexical channel,
            :mod:`llama_index_video.search.lexical`), fused with the dense channels;
            False: by meaning only. Writers keep the lexical index either way.
        lexical_threshold: The least lexical match (0-1) of a lexical hit.
        snapshot_reads: Read a private copy of the version the last writer finished (a
            local Chroma folder only; see the module docstring), moved to each newer one
            at the next read: another process's writer never changes what is read. The
            copy is as big as the index, in the temporary folder, deleted when the index
            is closed or collected, or at exit; ``vector_store`` and ``index`` are the
            copy's, so write only through ``ingest``, ``remove`` and the other methods.
            False (the default): read the folder in place, from the version the vectors
            were loaded at while another process writes (see the module docstring).

    Raises:
        IndexCompatibilityError: the folder was built by a newer index format or with
            another embedding or visual model.
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_INDEX_DIR,
        *,
        embed_model: BaseEmbedding | EmbeddingSpec | None = None,
        vector_store: BasePydanticVectorStore | None = None,
        reader_options: ReaderOptions | None = None,
        reader: VideoReader | None = None,
        threshold: float | str | None = "auto",
        collection: str | None = None,
        visual_model: MultiModalEmbedding | None = None,
        frame_store: BasePydanticVectorStore | None = None,
        visual_threshold: float | str | None = "auto",
        weights: Mapping[str, float] | None = None,
        relevance: Gate | str | None = "auto",
        chroma_url: str | None = None,
        lexical: bool = True,
        lexical_threshold: float | None = LEXICAL_THRESHOLD,
        snapshot_reads: bool = False,
    ) -> None:
        if frame_store is not None and not frame_store.stores_text:
            raise ValueError("frame_store must store nodes (stores_text), as Chroma does")
        if reader is not None and reader_options is not None:
            raise ValueError("pass reader_options or a ready reader, not both")
        self.weights = weights_for(weights)
        self.path = Path(path)
        self.folder = IndexFolder(self.path)
        self.manifest = Manifest(self.folder.manifest_file)
        self.embedding_spec: EmbeddingSpec | None = None
        if isinstance(embed_model, BaseEmbedding):
            self.embed_model = embed_model
        else:
            self.embedding_spec = embed_model or self._stored_spec()
            self.embed_model = self.embedding_spec.build()
        self.identity = embedding_identity(self.embed_model)
        self._check_compatible()
        self.multimodal = embeds_clips(self.embed_model)
        """Whether the embedding embeds video and audio clips, so the reader cuts them."""
        if reader_options is not None and reader_options.clips is not None and not self.multimodal:
            self.manifest.close()
            raise ValueError(
                f"reader_options.clips: {self.identity} embeds text only, so no clips are "
                "cut; clip windows apply to a multimodal embedding (EmbeddingSpec(backend="
                "'gemini'), ingest --embed gemini)"
            )
        self.reader_options = reader_options
        self.visual_model = visual_model_for(
            self.path,
            self.manifest.get_meta(VISUAL_META),
            visual_model,
            indexed=bool(self.manifest.files()),
        )
        self.visual_identity = embedding_identity(self.visual_model) if self.visual_model else None
        self.chroma_url = chroma_url or self.manifest.get_meta(CHROMA_URL_META)
        self.collection = collection_name(collection, self.manifest.get_meta(COLLECTION_META))
        self._given_stores = (vector_store, frame_store)
        self.lexical = LexicalStore(self.path)
        """The folder's lexical index (words of every moment, BM25), kept by every writer."""
        self.lexical_search = lexical
        """Whether search has the lexical channel (the index is kept either way)."""
        self.lexical_threshold = lexical_threshold
        self._store_checked = False
        self._releases = 0
        self.frame_store: BasePydanticVectorStore | None = None
        self.snapshot_reads = snapshot_reads
        """Whether reads are served from a private copy of the last finished version."""
        self._view: Snapshot | None = None
        self._discard_view: weakref.finalize[[], VideoIndex] | None = None
        self._view_failed: int | None = None
        self._held: WriterLock | None = None
        self._pinned: int | None = None
        self._held_contents: set[str] | None = None
        self._unread = False
        read_only_manifest = self.manifest.read_only
        view = self._new_view()
        if view is None:
            self._open_vectors()
        else:
            self._move(view)
        self.read_only = read_only_manifest or is_read_only_copy(self.folder.chroma)
        """Opened from a folder this process may not write: search only."""
        self._reader = reader
        self.threshold = threshold_for(threshold, DEFAULT_THRESHOLDS.get(self.identity))
        self.visual_threshold = threshold_for(
            visual_threshold, DEFAULT_VISUAL_THRESHOLDS.get(self.visual_identity or "")
        )
        self.relevance: Gate | None = gate_for(relevance, self.identity)
        self.calibration = DEFAULT_CALIBRATIONS.get(self.identity)

    @property
    def reader(self) -> VideoReader:
        """How files are read: the reader given, or one built from ``reader_options`` on
        first use (searching needs no media decoder)."""
        if self._reader is None:
            from llama_index_video.reader.options import ReaderOptions
            from llama_index_video.reader.video_reader import VideoReader

            self._reader = VideoReader.from_options(
                self.reader_options or ReaderOptions(),
                media_dir=self.folder.media,
                clips=self.multimodal,
            )
        return self._reader

    @reader.setter
    def reader(self, reader: VideoReader) -> None:
        warnings.warn(
            "assigning VideoIndex.reader is deprecated and will be removed in the next "
            "release; pass VideoIndex(path, reader_options=ReaderOptions(...)) (or reader=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        self._reader = reader

    def close(self) -> None:
        """Close the folder's manifest (its SQLite connection), and delete the copy the
        reads were served from."""
        self.manifest.close()
        if self._discard_view is not None:
            self._discard_view()
        self._view = self._discard_view = None

    @contextmanager
    def _writing(self, wait: float) -> Iterator[None]:
        """Hold the folder's writer lock, with vectors no older than the last writer's."""
        if self.read_only:
            self.manifest.require_writable()
            raise read_only(self.folder.chroma)
        with WriterLock(self.path) as lock:
            lock.acquire(wait=wait)
            if lock.previous_holder:
                logger.info("the last writer, %s, did not finish", lock.previous_holder)
            if self._local_vectors and self.folder.vectors_stale(lock):
                with folder_lease(self.path).exclusive():  # see reopen()
                    self._move(None, release=True)  # never write from vectors of before
            elif self._view is not None:  # writes go to the folder, never to the copy
                with folder_lease(self.path).exclusive():
                    self._move(None)
            else:
                self._follow_writers()
            if is_read_only_copy(self.folder.chroma):  # only its Chroma is read-only
                self.read_only = True
                raise read_only(self.folder.chroma)
            self.folder.written_by(lock)
            self._unpin()  # this process writes the manifest now
            self._held = lock
            try:
                with translated(self.folder.chroma), server_answering(self.chroma_url):
                    yield
            finally:
                self._held = None

    def _committing(self) -> None:
        """Begin the commit step of the write in progress (``WriterLock.committing``)."""
        if self._held is not None:
            self._held.committing()

    def reopen(self) -> None:
        """Load the vectors (and the manifest) afresh, to see what another process wrote.

        With ``snapshot_reads``, a copy of the version the last writer finished is read
        from now on (the folder in place while a writer is at work). Only the local
        Chroma folder this index opened itself is reopened (a Chroma server, or a store
        passed in, is used as it is); every ``VideoIndex`` of this process reading the
        same folder in place reopens too, at its next use. Reads do this by themselves
        once a writer has finished (:meth:`_follow_writers`), and ``ingest``,
        ``remove``, ``prune`` and ``verify`` when another writer wrote since. It waits
        for the reads of the folder in progress in this process (the folder's lease), so
        it may not be called inside one.
        """
        with folder_lease(self.path).exclusive():
            view = self._new_view()
            self._move(view, release=view is None)

    def _move(self, view: Snapshot | None, *, release: bool = False) -> None:
        """Read ``view`` from now on (None: the folder in place, loaded afresh with
        ``release``) and delete the copy read before. Hold the folder's lease
        exclusively (or be the constructor)."""
        if release and self._local_vectors:
            self.folder.release()
        old = self._discard_view
        self._view = view
        self._discard_view = None if view is None else weakref.finalize(self, view.discard)
        self.manifest.close()  # a read-only folder's manifest may be read as immutable
        self.manifest = Manifest(self._opened.manifest_file)
        self._pinned = None
        self._held_contents = None
        self._open_vectors()
        self.lexical = LexicalStore(self._opened.path)
        if old is not None:
            old()

    @property
    def _opened(self) -> IndexFolder:
        """The folder the stores are opened from: the copy read, or the index folder."""
        return self.folder if self._view is None else IndexFolder(self._view.folder)

    def _new_view(self) -> Snapshot | None:
        """A copy of the version the last writer finished, to read from; None without
        ``snapshot_reads``, while a writer is at work, or when it cannot be copied (one
        warning per version: the folder is read in place meanwhile)."""
        if not self.snapshot_reads or not self._local_vectors:
            return None
        try:
            return take_snapshot(self.path)
        except (OSError, sqlite3.Error) as exc:
            self._view_failed = read_generation(self.path)
            logger.warning("%s: cannot copy it (%s); reading the folder in place", self.path, exc)
            return None

    def _view_behind(self) -> bool:
        """Whether a writer has finished a version this index's copy does not hold (its
        own included: it wrote in place), and that version was not found uncopyable."""
        generation = read_generation(self.path)
        return (
            generation is not None
            and generation != self._view_failed
            and (self._view is None or generation != self._view.generation)
        )

    @property
    def changed_on_disk(self) -> bool:
        """Whether another process wrote to the index since this process loaded its
        vectors (also while it is still writing); the next read reopens once it has
        finished."""
        if self._view is not None:
            return read_generation(self.path) != self._view.generation
        return self._local_vectors and self.folder.changed_since_loaded()

    @property
    def _local_vectors(self) -> bool:
        """Whether the vectors are a local Chroma folder this index opened itself."""
        return self._given_stores[0] is None and self.chroma_url is None

    def _open_vectors(self) -> None:
        """Open the vector stores and the LlamaIndex index over them."""
        given, frame_store = self._given_stores
        if self._local_vectors and self._view is None:
            self.folder.note_loaded()
        self._releases = releases(self._opened.chroma)
        load = self._view is not None or not WriterLock(self.path).holder()
        self._unread = not load
        """Opened while a writer is at work, and not read since: loaded at the next read."""
        self.vector_store = given or open_chroma(
            self._opened.chroma,
            self.collection,
            url=self.chroma_url,
            load=load,  # see open_chroma: never mid-write (nobody writes a copy)
        )
        self._store_checked = False
        self.frame_store = None
        self.index = self._open_index(frame_store)

    def _follow_writers(self) -> None:
        """Before a read: move to the version a writer has finished since this one was
        loaded (with ``snapshot_reads`` a copy of it, else the folder loaded afresh; a
        long-lived index otherwise found nothing of a file replaced meanwhile, and a
        filtered search failed with chromadb's ``Error finding id``), or open the
        vectors again when another ``VideoIndex`` of this process reading the folder in
        place reloaded them. Never inside a read of this thread, nor while a writer is at
        work (its version is not finished; this one is read meanwhile). Then hold the
        manifest at the version read (:meth:`_pin`)."""
        lease = folder_lease(self.path)
        if not self._local_vectors or lease.reading_here():
            return
        if self._view is None:
            wait_for_commit(self.path)
        if self.snapshot_reads:
            if self._view_behind():
                with lease.exclusive():
                    if self._view_behind():  # not moved by another thread meanwhile
                        view = self._new_view()
                        if view is not None:
                            self._move(view)
        elif self.folder.behind_writers():
            with lease.exclusive():
                if self.folder.behind_writers():  # not reopened by another thread meanwhile
                    self._move(None, release=True)
        if self._view is None and self._releases != releases(self.folder.chroma):
            self._open_vectors()
        if self._pin_due(read_generation(self.path)):
            with lease.exclusive():
                self._pin()
        self._unread = False  # the read that follows loads them

    def _pin_due(self, generation: int | None) -> bool:
        """Whether the manifest is to be held afresh (:meth:`_pin`) before a read, the
        write generation being ``generation``."""
        if self._view is not None:  # a copy never changes
            return False
        if generation is None:  # a writer at work: vectors not loaded yet can be held
            return self._unread and not self.manifest.holding
        return not self.snapshot_reads and (  # a copy not made does not follow writers
            generation != self._pinned or not self.manifest.holding
        )

    def _pin(self) -> None:
        """Read the manifest, from now until the vectors move, as it was at the version
        they were loaded at (:meth:`Manifest.hold`), while that version is the last one
        finished: a writer of another process at work then commits its files to the
        manifest, but its rows are unknown to the loaded vectors, and it deletes what it
        replaced only in its commit step (:mod:`llama_index_video.store.index_writer`).
        Vectors opened while a writer is at work are held to the manifest as it is at
        their first read, which loads them after: every row of every file it lists is
        stored by then, and none is deleted before the writer's commit step. Nothing is
        held when the vectors are not the last version's, when they were loaded while a
        writer was at work, or when a writer began or ended as it was taken (what it
        committed first might be in it)."""
        self._unpin()
        generation = read_generation(self.path)
        if not self._local_vectors or self.folder.behind_writers():
            return
        if generation is None and not self._unread:
            return
        self.manifest.hold()
        if read_generation(self.path) != generation:
            self.manifest.let_go()
            return
        self._pinned = generation

    def _unpin(self) -> None:
        self.manifest.let_go()
        self._pinned = None
        self._held_contents = None

    def _behind_writers(self) -> bool:
        return self._view is None and self._local_vectors and self.folder.behind_writers()

    def _version_contents(self, *, filtered: bool = True) -> set[str] | None:
        if not self.manifest.holding or read_generation(self.path) is not None:
            return None
        if not filtered and self._pinned is not None and not self.folder.loaded_mid_write():
            return None  # vectors of the version held alone: an unfiltered query meets no other
        held = self._held_contents
        if held is None:  # read once per version held: it does not change
            held = {record.content_hash for record in self.manifest.files("indexed")}
            self._held_contents = held
        return held

    def _open_index(self, frame_store: BasePydanticVectorStore | None) -> VectorStoreIndex:
        """The text index, or with visual search a multimodal one over both stores."""
        if self.visual_model is None:
            storage = StorageContext.from_defaults(vector_store=self.vector_store)
            return FolderVectorStoreIndex(
                nodes=[],
                storage_context=storage,
                embed_model=self.embed_model,
                transformations=embedding_only(self.embed_model),
                folder=self.path,
            )
        frames = (
            FRAMES_COLLECTION
            if self.collection == DEFAULT_COLLECTION
            else f"{self.collection}-frames"
        )
        self.frame_store = frame_store or open_chroma(
            self._opened.chroma, frames, url=self.chroma_url
        )
        storage = StorageContext.from_defaults(
            vector_store=self.vector_store, image_store=self.frame_store
        )
        return FolderMultiModalVectorStoreIndex(
            nodes=[],
            storage_context=storage,
            embed_model=self.embed_model,
            image_embed_model=self.visual_model,
            transformations=embedding_only(self.embed_model),
            folder=self.path,
        )

    def _stored_spec(self) -> EmbeddingSpec:
        """The embedding this folder was built with (the local default for a new one)."""
        stored = self.manifest.get_meta(SPEC_META)
        return EmbeddingSpec.from_json(stored) if stored else EmbeddingSpec()

    def _check_compatible(self) -> None:
        check_compatible(self.manifest, self.path, self.identity)


__getattr__ = moved(
    __name__,
    "llama_index_video.search.policy",
    "CANDIDATES_PER_HIT",
    "MIN_CANDIDATES",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_WEIGHTS",
)
