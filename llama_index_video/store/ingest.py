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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import BaseNode, ImageNode, Node, TextNode

from llama_index_video import schema
from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.media.names import source_files_glob
from llama_index_video.reader.ids import content_hash, document_id
from llama_index_video.reader.video_reader import SUPPORTED_SUFFIXES, VideoReader
from llama_index_video.store.manifest import Manifest, PathRecord, PendingNode

logger = logging.getLogger(__name__)

Outcome = Literal["indexed", "skipped", "failed"]
IngestProgress = Callable[[Path, str, float, float], None]
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

    def of(self, outcome: Outcome) -> list[FileOutcome]:
        return [f for f in self.files if f.outcome == outcome]

    @property
    def ok(self) -> bool:
        return not self.of("failed") and not any(f.pending for f in self.files)


def expand_paths(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files as given, and the supported files inside folders, recursively and sorted."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in SUPPORTED_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            yield path


class Ingestor:
    """Adds files to ``index``, keeping ``manifest`` in step with it."""

    def __init__(
        self,
        index: VectorStoreIndex,
        manifest: Manifest,
        reader: VideoReader,
        *,
        embed_model: BaseEmbedding | None = None,
        batch_size: int = 64,
        progress: IngestProgress | None = None,
    ) -> None:
        self._index = index
        self._manifest = manifest
        self._reader = reader
        self._batch_size = batch_size
        self._try_embed = getattr(embed_model, "try_embed_nodes", None)
        self._progress = progress or (lambda path, stage, done, total: None)

    def ingest(self, paths: Iterable[str | Path]) -> IngestReport:
        """Ingest files and folders; see the module docstring for the rules."""
        self._clean_interrupted()
        outcomes = []
        for path in expand_paths(paths):
            outcome = self._ingest_one(path)
            log = logger.warning if outcome.outcome == "failed" else logger.info
            log("%s %s%s", outcome.outcome, path, f": {outcome.reason}" if outcome.reason else "")
            outcomes.append(outcome)
        return IngestReport(outcomes)

    def remove(self, file_hash: str) -> None:
        """Delete a content's nodes and frames and forget it."""
        self._delete_nodes(file_hash)
        for path in self._reader.media_dir.glob(source_files_glob(file_hash)):
            path.unlink(missing_ok=True)
        self._manifest.forget_pending(file_hash)
        self._manifest.forget_file(file_hash)

    def _ingest_one(self, path: Path) -> FileOutcome:
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            return FileOutcome(
                path, "failed", f"unsupported file type '{path.suffix or path.name}'"
            )
        try:
            stat = path.stat()
        except OSError as exc:
            return FileOutcome(path, "failed", f"cannot be read ({exc.strerror or exc})")
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
            others = [p for p in self._manifest.paths_of(file_hash) if p.path != key]
            self._settle_path(record, previous)
            if self._manifest.pending(file_hash):
                return self._retry_pending(path, file_hash)
            if known and previous == file_hash:
                return FileOutcome(path, "skipped", "unchanged", existing.node_count, file_hash)
            reason = f"same content as {others[0].source}" if others else "unchanged"
            return FileOutcome(path, "skipped", reason, existing.node_count, file_hash)
        return self._index_content(path, record, previous)

    def _index_content(self, path: Path, record: PathRecord, previous: str | None) -> FileOutcome:
        file_hash = record.content_hash
        self._delete_nodes(file_hash)  # leftovers of a failed or interrupted run
        self._manifest.forget_pending(file_hash)
        self._manifest.set_file(file_hash, "indexing")
        try:
            result = self._reader.read(
                path,
                file_hash=file_hash,
                progress=lambda stage, done, total: self._progress(path, stage, done, total),
            )
            pending = self._add_nodes(path, result.nodes)
        except VideoIndexError as exc:
            return self._fail(path, record, previous, exc)
        except Exception as exc:  # a backend failing deep inside: one line, never a traceback
            return self._fail(
                path, record, previous, MediaError(path, f"{type(exc).__name__}: {exc}")
            )
        notes = list(result.notes)
        if pending:
            why = pending_reason(self._manifest.pending(file_hash))
            notes.append(
                f"{pending} of {len(result.nodes)} moments not embedded yet ({why}); "
                "the next ingest retries them"
            )
        with self._manifest.transaction():
            self._manifest.set_file(
                file_hash,
                "indexed",
                node_count=len(result.nodes) - pending,
                duration=result.duration,
                notes="; ".join(result.notes),
            )
            self._settle_path(record, previous)
        return FileOutcome(
            path, "indexed", "; ".join(notes), len(result.nodes) - pending, file_hash, pending
        )

    def _retry_pending(self, path: Path, file_hash: str) -> FileOutcome:
        """Embed the nodes an earlier run could not, and store those that now succeed."""
        items = self._manifest.pending(file_hash)
        nodes = [_node_from_json(item.node_type, item.node_json) for item in items]
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

    def _fail(
        self, path: Path, record: PathRecord, previous: str | None, exc: VideoIndexError
    ) -> FileOutcome:
        self._delete_nodes(record.content_hash)
        reason = _reason(path, exc)
        self._manifest.set_file(record.content_hash, "failed", error=reason)
        logger.debug("failure detail for %s", path, exc_info=exc)
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
                        self._manifest.add_pending(_pending(node, str(failed[node.node_id])))
                batch = [node for node in batch if node.node_id not in failed]
                pending += len(failed)
            if batch:
                self._index.insert_nodes(batch)
            self._progress(path, "embed", min(start + self._batch_size, total), total)
        return pending

    def _settle_path(self, record: PathRecord, previous: str | None) -> None:
        """Point the path at its content; drop what the path held before if now unused.

        Paths of the same content that no longer exist (the file was moved) are dropped.
        """
        self._manifest.set_path(record)
        for other in self._manifest.paths_of(record.content_hash):
            if other.path != record.path and not Path(other.path).exists():
                self._manifest.forget_path(other.path)
        if previous and previous != record.content_hash and not self._manifest.paths_of(previous):
            self.remove(previous)

    def _delete_nodes(self, file_hash: str) -> None:
        self._index.delete_ref_doc(document_id(file_hash), delete_from_docstore=True)

    def _clean_interrupted(self) -> None:
        for record in self._manifest.files("indexing"):
            logger.warning("cleaning up an interrupted ingest of %s", record.content_hash[:12])
            self._delete_nodes(record.content_hash)
            self._manifest.set_file(
                record.content_hash, "failed", error="interrupted; re-indexed on the next ingest"
            )


def _reason(path: Path, exc: VideoIndexError) -> str:
    """The error text without the leading path (the report shows the path already)."""
    text = str(exc)
    prefix = f"{path}: "
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
