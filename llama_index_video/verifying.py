"""Checking an index folder: the facade's ``verify`` (and repair) and ``check_store``.

``verify`` compares the vector stores, the lexical index and the media folder with
what the manifest lists (:mod:`llama_index_video.store.integrity`); with ``repair`` it
takes the writer lock, clears what an interrupted or damaged run left and re-indexes
the files with missing moments from the paths the manifest recorded, and makes the
chapters of recordings indexed without them.
``check_store`` is the cheap check every read does first: two counts, taken again
while a writer commits. The attributes declared here are the index's, set when it
opens its folder (:mod:`llama_index_video.index`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import IndexCorruptError, VideoIndexError
from llama_index_video.store.collection import row_total, stores_by_name
from llama_index_video.store.integrity import IndexCheck, check_index, lost_manifest
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS
from llama_index_video.store.storage_errors import translated
from llama_index_video.writing import Writing

if TYPE_CHECKING:
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.store.ingest_report import FileOutcome, IngestProgress, IngestReport

_CHECK_ATTEMPTS = 3


class Verifying(Writing):
    """``verify`` and ``check_store`` of an index folder (see the module docstring)."""

    read_only: bool
    frame_store: BasePydanticVectorStore | None
    _store_checked: bool

    def verify(
        self,
        *,
        repair: bool = False,
        progress: IngestProgress | None = None,
        wait: float = DEFAULT_WAIT_SECONDS,
    ) -> tuple[IndexCheck, IngestReport | None]:
        """Check that the vector store and media folder hold what the manifest lists.

        With ``repair``, delete stray rows, orphan frames and clips and partial files,
        and re-index the files with missing moments (or left half-indexed) from the
        paths the manifest recorded for them, if they still exist, with the index's
        reader, and name their voices from the folder's voice library as ``ingest``
        does; those whose files are gone are in the report as failed (so it is not
        ``ok``). Then make the chapters of long recordings indexed without them, from
        their stored units (:mod:`llama_index_video.chapters.backfill`).

        Returns:
            What was found (before any repair), and the re-indexing report (None
            without ``repair``).

        Raises:
            VideoIndexError: with ``repair``, a recording to read again had speaker
                labels and the reader labels none; nothing was changed.
        """
        if self.read_only and not repair:
            with translated(self.folder.chroma):
                return self._check(per_source=True), None
        with self._writing(wait):
            check = self._check(per_source=True)
            if not repair:
                return check, None
            if not check.manifest_lost:  # else the rebuilt manifest takes them from the store
                self._record_identity()
            again = [s.content_hash for s in check.damaged] + check.interrupted
            again += check.to_reindex
            self._refuse_losing_speakers(again)
            ingestor = self._ingestor(progress)
            ingestor.recover(check)
            from llama_index_video.store.ingest_report import IngestReport, source_gone

            found: list[Path] = []
            gone: list[FileOutcome] = []
            for key in again:
                paths = [Path(self.manifest.located(r)) for r in self.manifest.paths_of(key)]
                there = next((path for path in paths if path.is_file()), None)
                if there is not None:
                    found.append(there)
                elif paths:  # known by no path: nothing to restore it from was ever recorded
                    gone.append(source_gone(paths[0], key))
            report = ingestor.ingest(found, on_file=self._naming_each(None))
            from llama_index_video.chapters.backfill import make_due_chapters

            make_due_chapters(ingestor, self.vector_store, self.manifest)
            return check, IngestReport([*report.files, *gone], report.unreachable)

    def _refuse_losing_speakers(self, contents: list[str]) -> None:
        """Raise when a recording among ``contents`` had speaker labels and this index's
        reader, which would read it again, labels none."""
        if self.reader.diarizer is not None:
            return
        summaries = self.manifest.summaries()
        labelled = [
            paths[0].source
            for key in contents
            if key in summaries
            and summaries[key].speakers
            and (paths := self.manifest.paths_of(key))
        ]
        if labelled:
            raise VideoIndexError(
                f"{', '.join(labelled)}: had speaker labels, and the repair would read it "
                "again without them; repair with speakers (verify --repair --speakers, or "
                "a reader with a diarizer)"
            )

    def check_store(self) -> None:
        """Fail if the vector store holds fewer rows than the manifest lists, or holds
        rows while the manifest lists nothing (cheap: two counts).

        Raises:
            IndexCorruptError: rows are missing, e.g. ``chroma/`` was deleted or emptied;
                or the manifest was emptied or lost.
        """
        self._follow_writers()
        if self._store_checked:
            return
        with translated(self.folder.chroma):
            self._count_rows()
        self._store_checked = True

    def _count_rows(self) -> None:
        """:meth:`check_store`'s two counts, taken again while a writer commits."""
        for _ in range(_CHECK_ATTEMPTS):  # a writer committing meanwhile: count again
            version = self.manifest.data_version()
            expected = self.manifest.indexed_node_total()
            empty = expected == 0 and self.manifest.lists_nothing()
            found = row_total(self.vector_store)
            if version == self.manifest.data_version():
                break
        if found and empty:
            raise lost_manifest(self.manifest, found, self.path)
        if found is not None and found < expected:
            raise IndexCorruptError(
                f"{self.folder.chroma}: the vector store holds {found} of the {expected} "
                f"moments the manifest lists; run 'llama-index-video verify --repair "
                f"--index {self.path}' to re-index what is missing"
            )

    def _check(self, *, per_source: bool) -> IndexCheck:
        check = check_index(
            self.manifest,
            self._stores(),
            self.reader.media_dir,
            per_source=per_source,
            lexical=self.lexical,
            folder=self.path,
        )
        if not per_source or check.manifest_lost:
            return check
        from llama_index_video.chapters.backfill import chapters_due

        return replace(check, unchaptered=chapters_due(self.vector_store, self.manifest))

    def _stores(self) -> dict[str, BasePydanticVectorStore]:
        return stores_by_name(self.vector_store, self.frame_store)
