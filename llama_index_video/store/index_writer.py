"""Writing and deleting one content's rows, media and manifest records, and finishing
what an interrupted run left half-done.

Order of writes, so readers only ever see complete contents: a content is marked
``indexing`` (committed) before its rows are deleted or added, and ``indexed`` only
once they are all in; a content being replaced or removed is forgotten first (and
recorded in the manifest's ``removals``), and its rows and media deleted after. So the
store always holds every row of every ``indexed`` content, and readers, which show
only ``indexed`` contents, never see a half-written or half-deleted one.

What a run forgets is deleted only in its commit step at the end
(:meth:`IndexWriter.finish_removals`, announced through ``committing``, see
:mod:`llama_index_video.store.lock`): an app reading the folder in place keeps the
manifest of the version it loaded while another process writes, and finds a replaced
file's old rows until that version is over.

The caller holds the index's writer lock (:mod:`llama_index_video.store.lock`), so
whatever an earlier run left half-done was interrupted: :meth:`IndexWriter.recover`
deletes the rows and media of interrupted contents, re-marks contents whose rows went
missing from the store (they are re-indexed when ingested), and deletes stray rows,
orphan frames and clips, and partial files (see
:mod:`llama_index_video.store.integrity`). The removals an interrupted run left are not
among them: readers may still be on the version before that run, which lists those
contents, so they are deleted in this run's own commit step, as its own are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from llama_index.core import VectorStoreIndex
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video.reader.ids import document_id
from llama_index_video.store.collection import (
    content_nodes,
    content_rows,
    rewrite_rows,
    stores_by_name,
)
from llama_index_video.store.integrity import (
    INTERRUPTED,
    IndexCheck,
    check_index,
    media_of,
    rebuild_manifest,
)
from llama_index_video.store.lexical import LexicalStore, check_lexical, repair_lexical
from llama_index_video.store.manifest import Manifest, PathRecord
from llama_index_video.store.relink import relink, settle

logger = logging.getLogger(__name__)


class IndexWriter:
    """Keeps ``index``, its lexical index and its media folder in step with ``manifest``
    as contents are written and removed; see the module docstring for the order."""

    def __init__(
        self,
        index: VectorStoreIndex,
        manifest: Manifest,
        *,
        media_dir: Path,
        batch_size: int,
        lexical: LexicalStore | None,
        committing: Callable[[], None] | None = None,
    ) -> None:
        self._index = index
        self._committing = committing or (lambda: None)
        self._lexical = lexical
        self._manifest = manifest
        self._media_dir = media_dir
        self._batch_size = batch_size
        self._unreachable: dict[str, list[str]] = {}
        self._folder = manifest.db_file.parent

    def settle(self) -> None:
        """End a run that wrote rows (see :func:`~llama_index_video.store.relink.settle`)."""
        self._unreachable = settle(
            self._index, self._stores(), folder=self._folder, batch_size=self._batch_size
        )

    def settle_amends(self) -> None:
        """End a run of :meth:`amend`: the lexical matrices rebuilt, then :meth:`settle`."""
        if self._lexical is not None:
            self._lexical.refresh()
        self.settle()

    def recover(self, check: IndexCheck | None = None) -> IndexCheck:
        """Finish or undo what earlier runs left half-done (see the module docstring).

        Args:
            check: What :func:`check_index` found, if the caller checked already.

        Returns:
            What was found before it was repaired.
        """
        check = check or self._index_check()
        if check.manifest_lost:
            logger.warning(
                "%s lists no file, but the vector store holds %d moments: recorded "
                "%d files again from them",
                self._manifest.db_file,
                check.manifest_lost,
                rebuild_manifest(self._manifest, self._index.vector_store),
            )
            self.recover(self._index_check())
            return check
        for key in check.interrupted:
            logger.warning("cleaning up an interrupted ingest of %s", key[:12])
            self._manifest.set_file(key, "failed", error=INTERRUPTED)
            self._delete_content(key)
        if check.damaged:
            logger.warning(
                "%d indexed file(s) have moments missing from the vector store or frames "
                "from the media folder (%s); they are re-indexed when ingested again",
                len(check.damaged),
                ", ".join(s.source or s.content_hash[:12] for s in check.damaged[:3]),
            )
        for source in check.damaged:
            self._manifest.set_file(source.content_hash, "failed", error=source.error)
            self._delete_content(source.content_hash)
        if check.unnamed:
            with self._manifest.transaction():
                for key in check.unnamed:
                    self._forget(key)  # its rows, media and words go in the commit step
        stores = self._stores()
        for name, ids in check.stray_rows.items():
            stores[name].delete_nodes(ids)
        unreachable = {
            name: [i for i in ids if i not in set(check.stray_rows.get(name, []))]
            for name, ids in check.unreachable.items()
        }
        self._unreachable = relink(
            self._index, stores, unreachable, folder=self._folder, batch_size=self._batch_size
        )
        if self._lexical is not None:
            # After the contents above were forgotten or re-marked: check again.
            indexed = {r.content_hash: r.node_count for r in self._manifest.files("indexed")}
            store = self._index.vector_store
            repair_lexical(
                self._lexical,
                check_lexical(self._lexical, indexed, removing=self._manifest.removals()),
                lambda key: content_nodes(store, key),
            )
        for path in [*check.orphan_media, *check.partial_files]:
            path.unlink(missing_ok=True)
        return check

    def _index_check(self) -> IndexCheck:
        return check_index(
            self._manifest,
            self._stores(),
            self._media_dir,
            per_source=False,
            lexical=self._lexical,
        )

    def remove(self, file_hash: str) -> None:
        """Forget a content; :meth:`finish_removals` deletes its nodes and media."""
        with self._manifest.transaction():
            self._forget(file_hash)

    def finish_removals(self) -> None:
        """The run's commit step: delete the rows, words and media of every content it
        (or an interrupted run before it) forgot, replaced or removed, once
        ``committing`` has announced it. The caller refreshes the lexical matrices after."""
        removals = self._manifest.removals()
        if removals:
            self._committing()
            self._finish_removals(removals)

    def amend(
        self,
        content_hash: str,
        *,
        add: Sequence[BaseNode],
        rewrite: Sequence[BaseNode],
        drop: Collection[str] = (),
    ) -> None:
        """Change an indexed content's rows in place, without reading its file again:
        store ``add`` (embedded already; over the rows of the same ids it holds), store
        the metadata of ``rewrite`` (rows it holds) over theirs, count the content's rows
        in the manifest without ``drop``, then delete ``drop``.

        In this order the store always holds at least the rows the manifest counts, so a
        reader never finds the content short; a kill anywhere leaves rows the manifest
        does not count yet (or not any more), which the caller, finding the same work
        still to do, does again. Needs a store that can list its rows (Chroma). End the
        run with :meth:`settle_amends`.
        """
        store = self._index.vector_store
        held = content_rows(store, content_hash) or {}
        new = [node for node in add if node.node_id not in held]
        if new:
            self._index.insert_nodes(new)
        rewrite_rows(store, [node for node in add if node.node_id in held], vectors=True)
        if self._lexical is not None:
            self._lexical.add(add)
        rewrite_rows(store, rewrite)
        record = self._manifest.file(content_hash)
        kept = set(content_rows(store, content_hash) or {}) - set(drop)
        if record is not None:
            self._manifest.set_file(
                content_hash,
                record.status,
                node_count=len(kept),
                duration=record.duration,
                notes=record.notes,
                error=record.error,
            )
        if drop:
            store.delete_nodes(list(drop))
            if self._lexical is not None:
                self._lexical.delete_content(content_hash)
                self._lexical.add(content_nodes(store, content_hash))

    def _write_media(self, media: dict[str, bytes]) -> None:
        """Frames and clips made by a worker elsewhere, into the index's media folder."""
        for relative, data in media.items():
            target = self._media_dir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.stem}.partial{target.suffix}")
            partial.write_bytes(data)
            partial.replace(target)  # a reader sending the old file keeps sending it whole

    def _commit_path(self, record: PathRecord, previous: str | None) -> None:
        with self._manifest.transaction():
            self._settle_path(record, previous)

    def _settle_path(self, record: PathRecord, previous: str | None) -> None:
        """Point the path at its content; forget what the path held before if now unused.

        Paths of the same content that no longer exist (the file was moved) are dropped,
        and so are those that now name this very file (a download, recorded before its
        index folder moved). Call inside a transaction; the rows and media of a content
        forgotten are deleted in the run's commit step (:meth:`finish_removals`).
        """
        self._manifest.set_path(record)
        for other in self._manifest.paths_of(record.content_hash):
            now = self._manifest.located(other)
            if other.path != record.path and (now == record.path or not Path(now).exists()):
                self._manifest.forget_path(other.path)
        if (
            previous
            and previous != record.content_hash
            and self._manifest.held_by_no_path(previous)
        ):
            self._forget(previous)

    def _forget(self, file_hash: str) -> None:
        self._manifest.add_removal(file_hash)
        self._manifest.forget_pending(file_hash)
        self._manifest.forget_file(file_hash)

    def _finish_removals(self, file_hashes: list[str]) -> None:
        for file_hash in file_hashes:
            self._delete_content(file_hash)
            self._manifest.forget_removal(file_hash)

    def _delete_content(self, file_hash: str) -> None:
        """Delete a content's rows and its frames and clips (finished or partial)."""
        self._delete_nodes(file_hash)
        for path in list(media_of(self._media_dir, file_hash)):
            path.unlink(missing_ok=True)

    def _delete_nodes(self, file_hash: str) -> None:
        if self._lexical is not None:
            self._lexical.delete_content(file_hash)
        self._index.delete_ref_doc(document_id(file_hash), delete_from_docstore=True)

    def _stores(self) -> dict[str, BasePydanticVectorStore]:
        """The vector stores this index writes to: the text store first, then frames'."""
        image_store = getattr(self._index, "image_vector_store", None)
        return stores_by_name(self._index.vector_store, image_store)
