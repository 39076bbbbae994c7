"""The index folder's manifest: which files are indexed, as what, and how.

A small SQLite database beside the vector store. It makes ingest incremental and
safe to interrupt: a file is marked ``indexing`` before its nodes are written and
``indexed`` after, so a run that was killed part-way leaves a mark the next run
cleans up (delete the partial nodes, then add again; node ids are deterministic, so
nothing is duplicated). Paths are keyed by their resolved absolute form; files by
content hash, so a moved or copied file is recognised without re-reading it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Status = Literal["indexing", "indexed", "failed"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    content_hash TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    node_count INTEGER NOT NULL DEFAULT 0,
    duration REAL,
    notes TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS paths (
    path TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS paths_by_hash ON paths (content_hash);
CREATE TABLE IF NOT EXISTS pending (
    node_id TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    node_type TEXT NOT NULL,
    node_json TEXT NOT NULL,
    error TEXT NOT NULL,
    updated_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class FileRecord:
    """One indexed (or failed) file content."""

    content_hash: str
    status: Status
    node_count: int
    duration: float | None
    notes: str
    error: str


@dataclass(frozen=True)
class PendingNode:
    """A node that could not be embedded; kept whole so the next ingest can retry it."""

    node_id: str
    content_hash: str
    node_type: str
    node_json: str
    error: str


@dataclass(frozen=True)
class PathRecord:
    """Where a content hash was seen, with the stat used to skip re-hashing."""

    path: str
    source: str
    content_hash: str
    size: int
    mtime_ns: int


class Manifest:
    """Access to ``manifest.sqlite`` in an index folder."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def file(self, content_hash: str) -> FileRecord | None:
        row = self._db.execute(
            "SELECT content_hash, status, node_count, duration, notes, error FROM files "
            "WHERE content_hash = ?",
            (content_hash,),
        ).fetchone()
        return None if row is None else FileRecord(*row)

    def files(self, status: Status | None = None) -> list[FileRecord]:
        query = "SELECT content_hash, status, node_count, duration, notes, error FROM files"
        rows = (
            self._db.execute(query + " WHERE status = ?", (status,))
            if status
            else self._db.execute(query)
        )
        return [FileRecord(*row) for row in rows]

    def set_file(
        self,
        content_hash: str,
        status: Status,
        *,
        node_count: int = 0,
        duration: float | None = None,
        notes: str = "",
        error: str = "",
    ) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO files "
            "(content_hash, status, node_count, duration, notes, error, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (content_hash, status, node_count, duration, notes, error, time.time()),
        )

    def updated_at(self, content_hash: str) -> float | None:
        """When the content's record last changed (seconds since the epoch)."""
        row = self._db.execute(
            "SELECT updated_at FROM files WHERE content_hash = ?", (content_hash,)
        ).fetchone()
        return None if row is None else float(row[0])

    def all_paths(self) -> list[PathRecord]:
        rows = self._db.execute(
            "SELECT path, source, content_hash, size, mtime_ns FROM paths ORDER BY source"
        )
        return [PathRecord(*row) for row in rows]

    def forget_file(self, content_hash: str) -> None:
        self._db.execute("DELETE FROM files WHERE content_hash = ?", (content_hash,))

    def path(self, path: str) -> PathRecord | None:
        row = self._db.execute(
            "SELECT path, source, content_hash, size, mtime_ns FROM paths WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else PathRecord(*row)

    def paths_of(self, content_hash: str) -> list[PathRecord]:
        rows = self._db.execute(
            "SELECT path, source, content_hash, size, mtime_ns FROM paths "
            "WHERE content_hash = ? ORDER BY path",
            (content_hash,),
        )
        return [PathRecord(*row) for row in rows]

    def set_path(self, record: PathRecord) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO paths (path, source, content_hash, size, mtime_ns) "
            "VALUES (?, ?, ?, ?, ?)",
            (record.path, record.source, record.content_hash, record.size, record.mtime_ns),
        )

    def forget_path(self, path: str) -> None:
        self._db.execute("DELETE FROM paths WHERE path = ?", (path,))

    def add_pending(self, item: PendingNode) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO pending "
            "(node_id, content_hash, node_type, node_json, error, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                item.node_id,
                item.content_hash,
                item.node_type,
                item.node_json,
                item.error,
                time.time(),
            ),
        )

    def pending(self, content_hash: str) -> list[PendingNode]:
        rows = self._db.execute(
            "SELECT node_id, content_hash, node_type, node_json, error FROM pending "
            "WHERE content_hash = ? ORDER BY node_id",
            (content_hash,),
        )
        return [PendingNode(*row) for row in rows]

    def forget_pending(self, content_hash: str, node_ids: list[str] | None = None) -> None:
        """Forget a content's pending nodes (all, or those in ``node_ids``)."""
        if node_ids is None:
            self._db.execute("DELETE FROM pending WHERE content_hash = ?", (content_hash,))
            return
        self._db.executemany(
            "DELETE FROM pending WHERE content_hash = ? AND node_id = ?",
            [(content_hash, node_id) for node_id in node_ids],
        )
