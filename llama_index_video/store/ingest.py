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

Each run starts by finishing or undoing what an interrupted run left half-done, and
writes in the order that keeps readers safe (:mod:`llama_index_video.store.index_writer`).
A full disk stops the run with :class:`DiskFullError`; what was complete stays indexed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.indices import MultiModalVectorStoreIndex
from llama_index.core.schema import BaseNode, TextNode

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
    LocalExecutor,
    Produced,
    Producer,
)
from llama_index_video.media.heap import release_free_memory
from llama_index_video.reader.ids import content_hash
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.file_walk import expand_paths, input_stat
from llama_index_video.store.folder_index import resolved_node, stored_node
from llama_index_video.store.index_writer import IndexWriter
from llama_index_video.store.ingest_report import (
    FileOutcome,
    FileReport,
    IngestProgress,
    IngestReport,
)
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.manifest import Manifest, PathRecord
from llama_index_video.store.pending_nodes import node_from_json, pending_node, pending_reason
from llama_index_video.store.storage_errors import storage_error

logger = logging.getLogger(__name__)


class ChapterMaker(Protocol):
    """Makes a file's chapter nodes from its nodes, embedding units not embedded yet
    (:func:`llama_index_video.chapters.nodes.add_chapters`, handed in by ``VideoIndex``)."""

    def __call__(
        self, nodes: Sequence[BaseNode], embed_model: BaseEmbedding, *, batch_size: int
    ) -> list[TextNode]: ...


@dataclass(frozen=True)
class _Read:
    """A file whose content must be read and indexed, replacing ``previous``."""

    path: Path
    record: PathRecord
    previous: str | None


class Ingestor(IndexWriter):
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
        chapters: ChapterMaker | None = None,
        committing: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(
            index,
            manifest,
            media_dir=reader.media_dir,
            batch_size=batch_size,
            lexical=lexical,
            committing=committing,
        )
        self._embed_model = embed_model
        self._make_chapters = chapters
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

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        link: str = "",
        on_file: FileReport | None = None,
    ) -> IngestReport:
        """Ingest files and folders; see the module docstring for the rules.

        Args:
            paths: Files and folders (searched recursively).
            link: The (redacted) link ``paths`` were downloaded from, named in the outcomes.
            on_file: Told each file's outcome as soon as it is known: a folder that
                cannot be listed first, then each file in input order.
        """
        self.recover()
        unreadable: list[tuple[Path, str]] = []
        passed_over: list[Path] = []
        steps = [self._check(path) for path in expand_paths(paths, unreadable, passed_over)]
        outcomes = [
            self._told(FileOutcome(p, "failed", why), link, on_file) for p, why in unreadable
        ]
        first: dict[str, _Read] = {}  # content -> the first file to read it from
        for step in steps:
            if isinstance(step, _Read):
                first.setdefault(step.record.content_hash, step)
        jobs = [FileJob(step.path, hash_) for hash_, step in first.items()]
        produced = self._executor.run(self._producer, jobs, self._progress)
        try:
            for step in steps:
                if isinstance(step, FileOutcome):
                    outcome = step
                elif first[step.record.content_hash] is step:
                    outcome = self._index_content(step, next(produced))
                else:  # same content as a file above, now indexed (or failed: read again)
                    outcome = self._ingest_one(step.path)
                outcomes.append(self._told(outcome, link, on_file))
                if self._lexical is not None:
                    self._lexical.refresh(force=False)
        finally:
            produced.close()
        self.finish_removals()
        if self._lexical is not None:  # after a failure the next run's recover() does it
            self._lexical.refresh()
        if any(outcome.outcome == "indexed" for outcome in outcomes):
            self.settle()
        report = IngestReport(
            outcomes, sum(len(ids) for ids in self._unreachable.values()), passed_over
        )
        if report.passed_over:
            logger.info("%s", report.passed_over_line)
        return report

    @staticmethod
    def _told(outcome: FileOutcome, link: str, on_file: FileReport | None) -> FileOutcome:
        """``outcome`` naming ``link`` (if any), logged and handed to ``on_file``."""
        outcome = replace(outcome, link=link) if link else outcome
        log = logger.warning if outcome.outcome == "failed" else logger.info
        reason = f": {outcome.reason}" if outcome.reason else ""
        log("%s %s%s", outcome.outcome, printable_path(outcome.path), reason)
        if on_file is not None:
            on_file(outcome)
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
        stat = input_stat(path)
        if isinstance(stat, str):
            return FileOutcome(path, "failed", stat)
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
            self._manifest.forget_removal(file_hash)  # forgotten earlier in this run: kept
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
            self._settle_path(record, previous)
        release_free_memory()  # what embedding and storing freed, before the next file
        return FileOutcome(
            path, "indexed", "; ".join(notes), len(nodes) - pending, file_hash, pending
        )

    def _chapters(self, nodes: list[BaseNode]) -> list[TextNode]:
        """A long recording's chapter nodes, when a ``chapters`` maker was given.

        Not with a model that keeps failures per node (its units are embedded, and may
        fail, in :meth:`_add_nodes`), nor without a model.
        """
        maker, model = self._make_chapters, self._embed_model
        if maker is None or model is None or self._try_embed is not None:
            return []
        return maker(nodes, model, batch_size=self._batch_size)

    def _retry_pending(self, path: Path, file_hash: str) -> FileOutcome:
        """Embed the nodes an earlier run could not, and store those that now succeed."""
        items = self._manifest.pending(file_hash)
        folder = self._manifest.db_file.parent
        nodes = [
            resolved_node(node_from_json(item.node_type, item.node_json), folder) for item in items
        ]
        left = self._add_nodes(path, nodes, retried=file_hash)
        record = self._manifest.file(file_hash)
        count = record.node_count if record else 0
        reason = f"embedded {len(nodes) - left} of {len(items)} pending moments"
        if left:
            reason += (
                f"; {left} still failing ({pending_reason(self._manifest.pending(file_hash))})"
            )
        return FileOutcome(path, "indexed", reason, count, file_hash, left)

    def _fail(self, path: Path, record: PathRecord, exc: VideoIndexError) -> FileOutcome:
        reason = _reason(path, exc)
        with self._manifest.transaction():
            self._manifest.set_file(record.content_hash, "failed", error=reason)
            self._manifest.set_failed_path(record.content_hash, record.path)
        self._delete_content(record.content_hash)
        logger.debug("failure detail for %s", printable_path(path), exc_info=exc)
        return FileOutcome(path, "failed", reason, content_hash=record.content_hash)

    def _add_nodes(self, path: Path, nodes: list[BaseNode], *, retried: str | None = None) -> int:
        """Embed and store ``nodes`` in batches; returns how many were left pending.

        ``retried``: the content whose pending nodes these are. Each stays pending until
        it is stored, and is then counted in the content's moments in the same
        transaction: a retry killed or failing half-way (a full disk, Ctrl-C while the
        model answers) loses none of them, and the next ingest retries what is left.
        """
        total, pending = len(nodes), 0
        for start in range(0, total, self._batch_size):
            batch = nodes[start : start + self._batch_size]
            if self._try_embed is not None:
                failed = {o.node_id: o.error for o in self._try_embed(batch) if not o.ok}
                for node in batch:
                    if node.node_id in failed:
                        kept = stored_node(node, self._manifest.db_file.parent)
                        self._manifest.add_pending(pending_node(kept, str(failed[node.node_id])))
                batch = [node for node in batch if node.node_id not in failed]
                pending += len(failed)
            if batch:
                self._index.insert_nodes(batch)
                if self._lexical is not None:
                    self._lexical.add(batch)
                if retried is not None:
                    self._count_stored(retried, [node.node_id for node in batch])
            self._progress(path, "embed", min(start + self._batch_size, total), total)
        return pending

    def _count_stored(self, file_hash: str, node_ids: list[str]) -> None:
        """Pending nodes of ``file_hash`` now stored: no longer pending, and counted."""
        with self._manifest.transaction():
            self._manifest.forget_pending(file_hash, node_ids)
            record = self._manifest.file(file_hash)
            self._manifest.set_file(
                file_hash,
                "indexed",
                node_count=(record.node_count if record else 0) + len(node_ids),
                duration=record.duration if record else None,
                notes=record.notes if record else "",
            )


def _reason(path: Path, exc: VideoIndexError) -> str:
    """The error text without the leading path (the report shows the path already)."""
    text = str(exc)
    prefix = f"{printable_path(path)}: "
    return text[len(prefix) :] if text.startswith(prefix) else text
