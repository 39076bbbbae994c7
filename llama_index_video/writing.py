"""Writing to an index folder: the facade's write side (``ingest``, ``remove``, ``prune``).

Every writer holds the folder's writer lock (``VideoIndex._writing``,
:mod:`llama_index_video.store.lock`) and writes through one
:class:`~llama_index_video.store.ingest.Ingestor`, which adds each file's chapters
(:mod:`llama_index_video.chapters`, handed over here so the store never imports them).
Before its first write an ingest records in the manifest how the index is built
(embedding, visual model, collection, Chroma server), so later opens of the folder
use the same. An ingest names the voices of the recordings it added from the folder's
voice library (:class:`~llama_index_video.naming.Naming`). The attributes declared here
are the index's, set when it opens its folder (:mod:`llama_index_video.index`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.embeddings.capabilities import output_dimension
from llama_index_video.naming import Naming
from llama_index_video.store.collection import chroma_collection
from llama_index_video.store.dimensions import check_dimension
from llama_index_video.store.folder import (
    CHROMA_URL_META,
    COLLECTION_META,
    EMBEDDING_META,
    SPEC_META,
    IndexFolder,
    check_compatible,
    record_settings,
)
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS
from llama_index_video.store.visual import NO_VISUAL, VISUAL_META

if TYPE_CHECKING:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from llama_index_video.embeddings.spec import EmbeddingSpec
    from llama_index_video.executor.base import Executor
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.sources.download import DownloadOptions
    from llama_index_video.store.ingest import Ingestor
    from llama_index_video.store.ingest_report import (
        FileOutcome,
        FileReport,
        IngestProgress,
        IngestReport,
    )

logger = logging.getLogger(__name__)


class Writing(Naming):
    """``ingest``, ``remove`` and ``prune`` of an index folder (see the module docstring)."""

    folder: IndexFolder
    index: VectorStoreIndex
    embed_model: BaseEmbedding
    embedding_spec: EmbeddingSpec | None
    identity: str
    visual_identity: str | None
    collection: str
    chroma_url: str | None
    reader: VideoReader

    def _committing(self) -> None:
        """Begin the commit step of the write in progress (``VideoIndex`` does it)."""
        raise NotImplementedError

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        progress: IngestProgress | None = None,
        executor: Executor | None = None,
        wait: float = DEFAULT_WAIT_SECONDS,
        downloads: DownloadOptions | None = None,
        on_file: FileReport | None = None,
    ) -> IngestReport:
        """Add files, folders and http(s) links; unchanged content is skipped, changed
        content replaced.

        Args:
            paths: Files and folders (searched recursively), and http(s) links: these are
                downloaded into ``media/downloads`` first (video sites need the ``web``
                extra).
            progress: Told how far each file has got.
            on_file: Told each file's outcome as soon as it is known (the report
                holds them all at the end); what it raises stops the ingest, and what
                was finished stays indexed.
            wait: Seconds to wait for another process writing to this folder (0: none).
            executor: Reads the files, e.g. ``RayExecutor(address)`` on a Ray cluster;
                by default this process does. Either way the rows written are the same.
            downloads: Size limit and retries for links.

        Raises:
            IndexBusyError: another process still writes to the folder after ``wait``.
            IndexReadOnlyError: the folder may not be written by this process.
            DiskFullError: the disk filled up; what was complete stays indexed.
        """
        with self._writing(wait):
            dimension = output_dimension(self.embed_model)
            collection = chroma_collection(self.vector_store)
            if dimension and collection is not None:
                check_dimension(collection, dimension, model=self.identity)
            self._record_identity()
            from llama_index_video.store.inputs import ingest_inputs

            return ingest_inputs(
                self._ingestor(progress, executor),
                paths,
                media_dir=self.folder.media,
                options=downloads,
                progress=progress,
                on_file=self._naming_each(on_file),
            )

    def _naming_each(self, on_file: FileReport | None) -> FileReport:
        """``on_file``, after naming the voices of each file indexed (in the writer lock).

        Each recording is named as soon as it is indexed: a run interrupted later keeps
        the names, and the next run skips the file.
        """

        def told(outcome: FileOutcome) -> None:
            if outcome.outcome == "indexed" and outcome.content_hash is not None:
                recording = (outcome.content_hash, outcome.path, outcome.shown)
                for shown, reason in self._name_voices([recording]).failed.items():
                    logger.warning("%s: its voices are not named: %s", shown, reason)
            if on_file is not None:
                on_file(outcome)

        return told

    def remove(self, source: str | Path, *, wait: float = DEFAULT_WAIT_SECONDS) -> int:
        """Take a path or link out of the index; returns how many paths it matched (0 or 1).

        Its rows, frames, clips and manifest entry go when no other path holds the same
        content; the media file itself is never touched. Takes the writer lock.

        Raises:
            MomentRequestError: ``source`` names several files (one relative path
                ingested from two folders): nothing is removed; give a path.
        """
        from llama_index_video.store.library import remove_source
        from llama_index_video.store.recording_names import source_to_remove

        with self._writing(wait):
            record = source_to_remove(self.manifest, str(source))
            if record is None:
                return 0
            ingestor = self._ingestor(None)
            self._finish_write(ingestor, forgot=remove_source(ingestor, self.manifest, record))
            return 1

    def prune(self, *, wait: float = DEFAULT_WAIT_SECONDS) -> list[str]:
        """Remove every source whose file is gone; returns their names. Takes the writer lock."""
        from llama_index_video.store.library import remove_source

        with self._writing(wait):
            ingestor = self._ingestor(None)
            gone = [
                r for r in self.manifest.all_paths() if not Path(self.manifest.located(r)).exists()
            ]
            dropped = [remove_source(ingestor, self.manifest, record) for record in gone]
            self._finish_write(ingestor, forgot=any(dropped))
            return [record.source for record in gone]

    def _finish_write(self, ingestor: Ingestor, *, forgot: bool) -> None:
        """End a write (in the writer lock): when it ``forgot`` contents, the commit step
        deletes their rows, words and media and settles the store; then the lexical
        matrices are rebuilt if the words changed."""
        if forgot:
            ingestor.finish_removals()
            ingestor.settle()
        self.lexical.refresh()

    def _ingestor(
        self, progress: IngestProgress | None, executor: Executor | None = None
    ) -> Ingestor:
        from llama_index_video.chapters.nodes import add_chapters
        from llama_index_video.store.ingest import Ingestor

        return Ingestor(
            self.index,
            self.manifest,
            self.reader,
            embed_model=self.embed_model,
            progress=progress,
            executor=executor,
            lexical=self.lexical,
            chapters=add_chapters,
            committing=self._committing,
        )

    def _record_identity(self) -> None:
        """Record how the index is built, refusing a folder built another way."""
        collection = chroma_collection(self.vector_store)
        check_compatible(self.manifest, self.path, self.identity, collection=collection)
        record_settings(
            self.manifest,
            {
                EMBEDDING_META: self.identity,
                SPEC_META: self.embedding_spec.to_json() if self.embedding_spec else None,
                VISUAL_META: self.visual_identity or NO_VISUAL,
                COLLECTION_META: self.collection,
                CHROMA_URL_META: self.chroma_url,
            },
            collection=collection,
        )
