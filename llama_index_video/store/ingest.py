"""Incremental, idempotent, resumable ingest of files into a vector index.

For each file: hash it (skipped when size and mtime match the manifest), skip it if
that content is already indexed (unchanged, moved or copied), otherwise read it,
embed and add its nodes in batches, and record it. A changed file replaces its old
nodes once the new ones are in; a failure is recorded with its reason and retried
by the next run, and never stops the other files. Before a file's nodes are added,
any nodes with its ids are deleted first: Chroma's ``add`` silently keeps old rows.

With an embedding that reports failures per item (``try_embed_nodes``, as
``GeminiMultimodalEmbedding`` does), a node that still fails after the model's own
retries is kept whole in the manifest and retried by the next run; the other nodes
of the file are stored meanwhile.

Order of writes, so readers only ever see complete contents: a content is marked
``indexing`` (committed) before its rows are deleted or added, and ``indexed`` only
once they are all in; a content being replaced or removed is forgotten first (and
recorded in the manifest's ``removals``), and its rows and media deleted after. So the
store always holds every row of every ``indexed`` content, and readers, which show
only ``indexed`` contents, never see a half-written or half-deleted one.

The caller holds the index's writer lock (:mod:`llama_index_video.store.lock`), so
whatever an earlier run left half-done was interrupted: each run starts by finishing
removals, deleting the rows and media of interrupted contents, re-marking contents
whose rows went missing from the store (they are re-indexed when ingested), deleting
stray rows, orphan frames and clips, and partial files (see
:mod:`llama_index_video.store.integrity`). A full disk stops the run with
:class:`DiskFullError`; what was complete stays indexed.
"""

from __future__ import annotations

import logging
import os
import stat as stat_module
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.indices import MultiModalVectorStoreIndex
from llama_index.core.schema import BaseNode, ImageNode, Node, TextNode
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video import schema
from llama_index_video.chapters.nodes import add_chapters
from llama_index_video.embeddings.capabilities import node_embedder
from llama_index_video.errors import (
    IndexStorageError,
    MediaError,
    VideoIndexError,
    printable_path,
)
from llama_index_video.executor.base import (
    Executor,
    FileJob,
    FileProgress,
    LocalExecutor,
    Produced,
    Producer,
)
from llama_index_video.media.heap import release_free_memory
from llama_index_video.reader.ids import content_hash, document_id
from llama_index_video.reader.options import SUPPORTED_SUFFIXES
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import content_nodes
from llama_index_video.store.folder_index import resolved_node, stored_node
from llama_index_video.store.integrity import (
    INTERRUPTED,
    MISSING_ROWS,
    IndexCheck,
    check_index,
    media_of,
    rebuild_manifest,
)
from llama_index_video.store.lexical import LexicalStore, check_lexical, repair_lexical
from llama_index_video.store.manifest import Manifest, PathRecord, PendingNode
from llama_index_video.store.relink import relink, settle
from llama_index_video.store.storage_errors import storage_error

logger = logging.getLogger(__name__)

Outcome = Literal["indexed", "skipped", "failed"]
IngestProgress = FileProgress
"""Called as ``progress(path, stage, done, total)``; stages: ``hash``, ``transcribe``,
``frames`` (media seconds), ``embed`` (nodes)."""


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one input file."""

    path: Path
    outcome: Outcome
    reason: str = ""
    node_count: int = 0
    content_hash: str | None = None
    pending: int = 0  # nodes that could not be embedded yet; retried by the next ingest
    link: str = ""  # the link the file was downloaded from (redacted), if any

    @property
    def shown(self) -> str:
        """How to name this input to the user: the link, else the path."""
        return self.link or str(self.path)


@dataclass(frozen=True)
class IngestReport:
    """Every file's outcome, in input order."""

    files: list[FileOutcome] = field(default_factory=list)
    unreachable: int = 0
    """Stored rows search still cannot reach after the repairs of the run
    (:mod:`llama_index_video.store.relink`)."""

    def of(self, outcome: Outcome) -> list[FileOutcome]:
        return [f for f in self.files if f.outcome == outcome]

    @property
    def ok(self) -> bool:
        return (
            not self.of("failed")
            and not any(f.pending for f in self.files)
            and not self.unreachable
        )


def expand_paths(
    paths: Iterable[str | Path], unreadable: list[tuple[Path, str]] | None = None
) -> Iterator[Path]:
    """Files as given, and the supported files inside folders, recursively and sorted.

    A folder (or sub-folder) that cannot be listed is appended to ``unreadable`` with
    the reason, instead of being skipped silently.
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            yield path
            continue
        found: list[Path] = []

        def note(error: OSError, root: Path = path) -> None:
            where = Path(error.filename) if error.filename else root
            if unreadable is not None:
                unreadable.append((where, f"folder cannot be read ({error.strerror or error})"))

        for folder, folders, files in os.walk(path, onerror=note):
            folders[:] = [name for name in folders if not name.startswith(".")]
            found.extend(
                Path(folder, name)
                for name in files
                if not name.startswith(".") and Path(name).suffix.lower() in SUPPORTED_SUFFIXES
            )
        yield from sorted(p for p in found if p.is_file())


@dataclass(frozen=True)
class _Read:
    """A file whose content must be read and indexed, replacing ``previous``."""

    path: Path
    record: PathRecord
    previous: str | None


class Ingestor:
    """Adds files to ``index``, keeping ``manifest`` in step with it.

    ``executor`` reads the files (in this process by default; see
    :mod:`llama_index_video.executor`); this driver writes every result, in order.
    """

    def __init__(
        self,
        index: VectorStoreIndex,
        manifest: Manifest,
        reader: VideoReader,
        *,
        embed_model: BaseEmbedding | None = None,
        batch_size: int = 64,
        progress: IngestProgress | None = None,
        executor: Executor | None = None,
        lexical: LexicalStore | None = None,
    ) -> None:
        self._index = index
        self._lexical = lexical
        self._manifest = manifest
        self._reader = reader
        self._batch_size = batch_size
        self._embed_model = embed_model
        self._try_embed = node_embedder(embed_model)
        self._progress = progress or (lambda path, stage, done, total: None)
        self._executor = executor or LocalExecutor()
        # Remote workers embed too, unless failures are kept per node (try_embed) or
        # frames go to a second, visual model: those stay with the driver.
        embeds_remotely = (
            self._executor.remote
            and self._try_embed is None
            and not isinstance(index, MultiModalVectorStoreIndex)
        )
        self._producer = Producer(
            reader, embed_model if embeds_remotely else None, batch_size=batch_size
        )
        self._unreachable: dict[str, list[str]] = {}
        self._folder = manifest.db_file.parent

    def ingest(self, paths: Iterable[str | Path]) -> IngestReport:
        """Ingest files and folders; see the module docstring for the rules."""
        self.recover()
        unreadable: list[tuple[Path, str]] = []
        steps = [self._check(path) for path in expand_paths(paths, unreadable)]
        first: dict[str, _Read] = {}  # content -> the first file to read it from
        for step in steps:
            if isinstance(step, _Read):
                first.setdefault(step.record.content_hash, step)
        jobs = [FileJob(step.path, hash_) for hash_, step in first.items()]
        produced = self._executor.run(self._producer, jobs, self._progress)
        outcomes = []
        try:
            for step in steps:
                if isinstance(step, FileOutcome):
                    outcome = step
                elif first[step.record.content_hash] is step:
                    outcome = self._index_content(step, next(produced))
                else:  # same content as a file above, now indexed (or failed: read again)
                    outcome = self._ingest_one(step.path)
                outcomes.append(self._logged(outcome))
                if self._lexical is not None:
                    self._lexical.refresh(force=False)
        finally:
            produced.close()
        if self._lexical is not None:  # after a failure the next run's recover() does it
            self._lexical.refresh()
        if any(outcome.outcome == "indexed" for outcome in outcomes):
            self.settle()
        outcomes.extend(self._logged(FileOutcome(p, "failed", why)) for p, why in unreadable)
        return IngestReport(outcomes, sum(len(ids) for ids in self._unreachable.values()))

    def settle(self) -> None:
        """End a run that wrote rows (see :func:`~llama_index_video.store.relink.settle`)."""
        self._unreachable = settle(
            self._index, self._stores(), folder=self._folder, batch_size=self._batch_size
        )

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
        for key in check.removals:
            self._finish_removal(key)
        for key in check.interrupted:
            logger.warning("cleaning up an interrupted ingest of %s", key[:12])
            self._manifest.set_file(key, "failed", error=INTERRUPTED)
            self._delete_content(key)
        if check.damaged:
            logger.warning(
                "%d indexed file(s) have moments missing from the vector store "
                "(%s); they are re-indexed when ingested again",
                len(check.damaged),
                ", ".join(s.source or s.content_hash[:12] for s in check.damaged[:3]),
            )
        for source in check.damaged:
            self._manifest.set_file(source.content_hash, "failed", error=MISSING_ROWS)
            self._delete_content(source.content_hash)
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
                check_lexical(self._lexical, indexed),
                lambda key: content_nodes(store, key),
            )
        for path in [*check.orphan_media, *check.partial_files]:
            path.unlink(missing_ok=True)
        return check

    def _index_check(self) -> IndexCheck:
        return check_index(
            self._manifest,
            self._stores(),
            self._reader.media_dir,
            per_source=False,
            lexical=self._lexical,
        )

    def remove(self, file_hash: str) -> None:
        """Forget a content, then delete its nodes and media."""
        with self._manifest.transaction():
            self._forget(file_hash)
        self._finish_removal(file_hash)
        if self._lexical is not None:  # the caller refreshes it once at the end
            self._lexical.refresh(force=False)

    def _logged(self, outcome: FileOutcome) -> FileOutcome:
        log = logger.warning if outcome.outcome == "failed" else logger.info
        reason = f": {outcome.reason}" if outcome.reason else ""
        log("%s %s%s", outcome.outcome, printable_path(outcome.path), reason)
        return outcome

    def _ingest_one(self, path: Path) -> FileOutcome:
        step = self._check(path)
        if isinstance(step, FileOutcome):
            return step
        job = FileJob(path, step.record.content_hash)
        produced = self._executor.run(self._producer, [job], self._progress)
        try:
            return self._index_content(step, next(produced))
        finally:
            produced.close()

    def _check(self, path: Path) -> FileOutcome | _Read:
        """The outcome when the manifest settles it, else what to read and replace."""
        if printable_path(path) != str(path):
            return FileOutcome(path, "failed", "file name is not valid UTF-8; rename it")
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            return FileOutcome(
                path, "failed", f"unsupported file type '{path.suffix or path.name}'"
            )
        try:
            stat = path.stat()
        except OSError as exc:
            return FileOutcome(path, "failed", f"cannot be read ({exc.strerror or exc})")
        if not stat_module.S_ISREG(stat.st_mode):
            return FileOutcome(path, "failed", f"not a regular file ({_file_kind(stat.st_mode)})")
        key = str(path.resolve())
        known = self._manifest.path(key)
        try:
            if known and (known.size, known.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
                file_hash = known.content_hash
            else:
                self._progress(path, "hash", 0, 1)
                file_hash = content_hash(path)
        except OSError as exc:
            return FileOutcome(path, "failed", f"cannot be read ({exc.strerror or exc})")
        record = PathRecord(key, str(path), file_hash, stat.st_size, stat.st_mtime_ns)
        previous = known.content_hash if known else None
        existing = self._manifest.file(file_hash)
        if existing is not None and existing.status == "indexed":
            others = [
                p
                for p in self._manifest.paths_of(file_hash)
                if key not in (p.path, self._manifest.located(p))
            ]
            self._commit_path(record, previous)
            if self._manifest.pending(file_hash):
                return self._retry_pending(path, file_hash)
            if known and previous == file_hash:
                return FileOutcome(path, "skipped", "unchanged", existing.node_count, file_hash)
            reason = f"same content as {others[0].source}" if others else "unchanged"
            return FileOutcome(path, "skipped", reason, existing.node_count, file_hash)
        return _Read(path, record, previous)

    def _index_content(self, step: _Read, produced: Produced) -> FileOutcome:
        path, record, previous = step.path, step.record, step.previous
        file_hash = record.content_hash
        with self._manifest.transaction():
            self._manifest.set_file(file_hash, "indexing")  # hidden from readers from now on
            if previous is None:  # a new file: listed by its path, even if it fails
                self._manifest.set_path(record)
        self._manifest.forget_pending(file_hash)
        self._delete_nodes(file_hash)  # leftovers of a failed or interrupted run
        try:
            result = produced.unwrap()
            self._write_media(produced.media)
            nodes = [*result.nodes, *self._chapters(result.nodes)]
            pending = self._add_nodes(path, nodes)
        except IndexStorageError:
            raise
        except VideoIndexError as exc:
            return self._fail(path, record, exc)
        except Exception as exc:  # a backend failing deep inside: one line, never a traceback
            storage = storage_error(exc, self._manifest.db_file.parent)
            if storage is not None:
                raise storage from exc
            return self._fail(path, record, MediaError(path, f"{type(exc).__name__}: {exc}"))
        notes = list(result.notes)
        if pending:
            why = pending_reason(self._manifest.pending(file_hash))
            notes.append(
                f"{pending} of {len(nodes)} moments not embedded yet ({why}); "
                "the next ingest retries them"
            )
        with self._manifest.transaction():
            self._manifest.set_file(
                file_hash,
                "indexed",
                node_count=len(nodes) - pending,
                duration=result.duration,
                notes="; ".join(result.notes),
            )
            unused = self._settle_path(record, previous)
        self._finish_removals(unused)
        release_free_memory()  # what embedding and storing freed, before the next file
        return FileOutcome(
            path, "indexed", "; ".join(notes), len(nodes) - pending, file_hash, pending
        )

    def _chapters(self, nodes: list[BaseNode]) -> list[TextNode]:
        """A long recording's chapter nodes (:mod:`llama_index_video.chapters`).

        Not with a model that keeps failures per node (its units are embedded, and may
        fail, in :meth:`_add_nodes`), nor without a model.
        """
        if self._embed_model is None or self._try_embed is not None:
            return []
        return add_chapters(nodes, self._embed_model, batch_size=self._batch_size)

    def _retry_pending(self, path: Path, file_hash: str) -> FileOutcome:
        """Embed the nodes an earlier run could not, and store those that now succeed."""
        items = self._manifest.pending(file_hash)
        folder = self._manifest.db_file.parent
        nodes = [
            resolved_node(_node_from_json(item.node_type, item.node_json), folder) for item in items
        ]
        self._manifest.forget_pending(file_hash)
        left = self._add_nodes(path, nodes)
        record = self._manifest.file(file_hash)
        count = (record.node_count if record else 0) + len(nodes) - left
        self._manifest.set_file(
            file_hash,
            "indexed",
            node_count=count,
            duration=record.duration if record else None,
            notes=record.notes if record else "",
        )
        reason = f"embedded {len(nodes) - left} of {len(items)} pending moments"
        if left:
            reason += (
                f"; {left} still failing ({pending_reason(self._manifest.pending(file_hash))})"
            )
        return FileOutcome(path, "indexed", reason, count, file_hash, left)

    def _fail(self, path: Path, record: PathRecord, exc: VideoIndexError) -> FileOutcome:
        reason = _reason(path, exc)
        self._manifest.set_file(record.content_hash, "failed", error=reason)
        self._delete_content(record.content_hash)
        logger.debug("failure detail for %s", printable_path(path), exc_info=exc)
        return FileOutcome(path, "failed", reason, content_hash=record.content_hash)

    def _add_nodes(self, path: Path, nodes: list[BaseNode]) -> int:
        """Embed and store ``nodes`` in batches; returns how many were left pending."""
        total, pending = len(nodes), 0
        for start in range(0, total, self._batch_size):
            batch = nodes[start : start + self._batch_size]
            if self._try_embed is not None:
                failed = {o.node_id: o.error for o in self._try_embed(batch) if not o.ok}
                for node in batch:
                    if node.node_id in failed:
                        kept = stored_node(node, self._manifest.db_file.parent)
                        self._manifest.add_pending(_pending(kept, str(failed[node.node_id])))
                batch = [node for node in batch if node.node_id not in failed]
                pending += len(failed)
            if batch:
                self._index.insert_nodes(batch)
                if self._lexical is not None:
                    self._lexical.add(batch)
            self._progress(path, "embed", min(start + self._batch_size, total), total)
        return pending

    def _write_media(self, media: dict[str, bytes]) -> None:
        """Frames and clips made by a worker elsewhere, into the index's media folder."""
        for relative, data in media.items():
            target = self._reader.media_dir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.stem}.partial{target.suffix}")
            partial.write_bytes(data)
            partial.replace(target)  # a reader sending the old file keeps sending it whole

    def _commit_path(self, record: PathRecord, previous: str | None) -> None:
        with self._manifest.transaction():
            unused = self._settle_path(record, previous)
        self._finish_removals(unused)

    def _settle_path(self, record: PathRecord, previous: str | None) -> list[str]:
        """Point the path at its content; forget what the path held before if now unused.

        Paths of the same content that no longer exist (the file was moved) are dropped,
        and so are those that now name this very file (a download, recorded before its
        index folder moved). Call inside a transaction; returns the contents forgotten,
        whose rows and media :meth:`_finish_removals` deletes once the transaction is
        committed.
        """
        self._manifest.set_path(record)
        for other in self._manifest.paths_of(record.content_hash):
            now = self._manifest.located(other)
            if other.path != record.path and (now == record.path or not Path(now).exists()):
                self._manifest.forget_path(other.path)
        if previous and previous != record.content_hash and not self._manifest.paths_of(previous):
            self._forget(previous)
            return [previous]
        return []

    def _forget(self, file_hash: str) -> None:
        self._manifest.add_removal(file_hash)
        self._manifest.forget_pending(file_hash)
        self._manifest.forget_file(file_hash)

    def _finish_removals(self, file_hashes: list[str]) -> None:
        for file_hash in file_hashes:
            self._finish_removal(file_hash)

    def _finish_removal(self, file_hash: str) -> None:
        self._delete_content(file_hash)
        self._manifest.forget_removal(file_hash)

    def _delete_content(self, file_hash: str) -> None:
        """Delete a content's rows and its frames and clips (finished or partial)."""
        self._delete_nodes(file_hash)
        for path in list(media_of(self._reader.media_dir, file_hash)):
            path.unlink(missing_ok=True)

    def _delete_nodes(self, file_hash: str) -> None:
        if self._lexical is not None:
            self._lexical.delete_content(file_hash)
        self._index.delete_ref_doc(document_id(file_hash), delete_from_docstore=True)

    def _stores(self) -> dict[str, BasePydanticVectorStore]:
        """The vector stores this index writes to: the text store first, then frames'."""
        stores = {"text": self._index.vector_store}
        image_store = getattr(self._index, "image_vector_store", None)
        if image_store is not None:
            stores["frames"] = image_store
        return stores


SOURCE_GONE = (
    "its moments could not be restored: the file is gone; ingest it from where it is "
    "now, or remove it"
)


def source_gone(path: Path, content_hash: str) -> FileOutcome:
    """A file a repair could not re-index because no path the manifest recorded holds it."""
    return FileOutcome(path, "failed", SOURCE_GONE, content_hash=content_hash)


def _file_kind(mode: int) -> str:
    kinds = {
        stat_module.S_ISFIFO: "a named pipe",
        stat_module.S_ISSOCK: "a socket",
        stat_module.S_ISCHR: "a character device",
        stat_module.S_ISBLK: "a block device",
        stat_module.S_ISDIR: "a folder",
    }
    return next((name for test, name in kinds.items() if test(mode)), "a special file")


def _reason(path: Path, exc: VideoIndexError) -> str:
    """The error text without the leading path (the report shows the path already)."""
    text = str(exc)
    prefix = f"{printable_path(path)}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


_NODE_TYPES: dict[str, type[BaseNode]] = {
    cls.class_name(): cls for cls in (TextNode, ImageNode, Node)
}


def _pending(node: BaseNode, error: str) -> PendingNode:
    return PendingNode(
        node_id=node.node_id,
        content_hash=str(node.metadata.get(schema.CONTENT_HASH, "")),
        node_type=node.class_name(),
        node_json=node.to_json(),
        error=error,
    )


def _node_from_json(node_type: str, node_json: str) -> BaseNode:
    return _NODE_TYPES.get(node_type, TextNode).from_json(node_json)


def pending_reason(items: list[PendingNode]) -> str:
    """The first failure, shortened: enough to tell a quota from a bad file."""
    return items[0].error[:160] if items else "unknown error"
