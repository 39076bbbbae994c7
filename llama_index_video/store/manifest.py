"""The index folder's manifest: which files are indexed, as what, and how.

A small SQLite database beside the vector store. It makes ingest incremental and
safe to interrupt: a file is marked ``indexing`` before its nodes are written and
``indexed`` after, so a run that was killed part-way leaves a mark the next run
cleans up (delete the partial nodes, then add again; node ids are deterministic, so
nothing is duplicated). Paths are keyed by their resolved absolute form; files by
content hash, so a moved or copied file is recognised without re-reading it. A file
downloaded into the index folder is where :meth:`Manifest.located` says: it moves
with the folder. Error texts are stored with API keys masked.

The manifest is also what readers trust: only ``indexed`` contents are visible to
search (:meth:`Manifest.indexed_among`), and the vector store holds at least their
``node_count`` rows each (:meth:`Manifest.indexed_node_total`), because a writer adds
rows before it marks a content indexed and deletes rows only after it has forgotten
the content. A content forgotten but whose rows are not deleted yet is kept in
``removals`` until they are.

An index this process may not write (a read-only share, another user's folder) is
opened read-only: no schema set-up, no WAL switch; if SQLite cannot even take its
read locks there (no ``-shm`` file may be created), the file is read as immutable.
Every SQLite failure leaves as the package's one-line error naming the file
(:mod:`llama_index_video.store.storage_errors`); a file that is not a database is
rebuilt by ``verify --repair`` from the stored moments, and the error says so.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from llama_index_video.api_keys import scrub
from llama_index_video.errors import IndexReadOnlyError
from llama_index_video.store.media_paths import resolved_source
from llama_index_video.store.storage_errors import (
    made_folder,
    read_only,
    repaired_by_verify,
    translated,
)

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
CREATE TABLE IF NOT EXISTS removals (content_hash TEXT PRIMARY KEY);
"""
_SUMMARY_SCHEMA = """
CREATE TABLE IF NOT EXISTS summaries (
    content_hash TEXT PRIMARY KEY,
    files_updated_at REAL NOT NULL,
    moments TEXT NOT NULL,
    language TEXT,
    speakers TEXT NOT NULL
);
"""
"""What ``list`` shows of each content beyond its ``files`` record, so it needs no vector
store (:meth:`Manifest.summaries`). Added to older manifests when they are next opened
for writing; a summary holds while its content's ``files`` record is unchanged."""
_FAILED_PATHS_SCHEMA = """
CREATE TABLE IF NOT EXISTS failed_paths (content_hash TEXT PRIMARY KEY, path TEXT NOT NULL);
"""
"""Where each failed content was read from. A file that changed and then failed keeps its
``paths`` row on the content indexed before (still searchable), so ``list`` names that
failure by this row. Added to older manifests when they are next opened for writing."""
BUSY_TIMEOUT_S = 30.0
REBUILT = "record the files again from the stored moments"
"""How ``verify --repair`` rebuilds a damaged manifest (see
:func:`~llama_index_video.store.integrity.rebuild_manifest`)."""


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
class ContentSummary:
    """What an indexed content's rows hold, counted when it was written: moments per
    modality, the languages heard (``en+de``) and the speakers."""

    moments: dict[str, int]
    language: str | None
    speakers: list[str]


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
    """Access to ``manifest.sqlite`` in an index folder.

    Raises:
        IndexCorruptError: the file is not a readable SQLite database.
        IndexReadOnlyError: it does not exist and cannot be created.
        IndexStorageError: its folder cannot be made (a file is in the way).
    """

    def __init__(self, path: Path) -> None:
        self.db_file = path
        self.read_only = False
        with translated(path, advice=repaired_by_verify(path.parent, REBUILT)):
            db: sqlite3.Connection | None = None
            try:
                made_folder(path.parent)
                db = _connect(path)
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                db.executescript(_SUMMARY_SCHEMA)
                db.executescript(_FAILED_PATHS_SCHEMA)
            except (sqlite3.OperationalError, OSError) as exc:
                if db is not None:
                    db.close()
                if not path.is_file() or not _cannot_write(exc):
                    raise
                db, _ = connect_read_only(path)
                self.read_only = True
            self._db = db
        self._file = db
        """The connection to the file (``_db`` is a held version's copy while one is held)."""
        self.holding = False
        """Whether a version is held (:meth:`hold`)."""

    def close(self) -> None:
        self.let_go()
        self._db.close()

    def require_writable(self) -> None:
        """Raise :class:`IndexReadOnlyError` (one line) if this manifest was opened read-only."""
        if self.read_only:
            raise read_only(self.db_file)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (a version held ends first, see :meth:`hold`)."""
        self._execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._execute("COMMIT")

    def hold(self) -> None:
        """Read the manifest as it is now until :meth:`let_go`, whatever other connections
        commit meanwhile: from a private copy of it in memory (SQLite's backup, in one
        step: one version). Not from a read transaction left open on the file: SQLite
        cannot reset its write-ahead log while one is, so the ``-wal`` file of a folder
        an app kept open grew by every later writer's commits, without bound
        (``benchmarks/manifest_wal.py``). Held again, it moves to the newest version. A
        write through this manifest ends the hold first (its reads then see what it
        wrote), but for a summary (:meth:`set_summary`), which goes to the file alone."""
        self.let_go()
        copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            with translated(self.db_file):
                self._file.backup(copy)
        except BaseException:
            copy.close()
            raise
        self._db = copy
        self.holding = True

    def let_go(self) -> None:
        """Stop holding the version :meth:`hold` took (nothing if none is held)."""
        if self.holding:
            self.holding = False
            self._db.close()
            self._db = self._file

    def _execute(self, sql: str, parameters: Iterable[Any] = ()) -> sqlite3.Cursor:
        """Run a write (or a transaction's ``BEGIN``/``COMMIT``), never inside a hold."""
        self.let_go()
        with translated(self.db_file):
            return self._db.execute(sql, tuple(parameters))

    def _rows(self, sql: str, parameters: Iterable[Any] = ()) -> list[Any]:
        with translated(self.db_file):
            return self._db.execute(sql, tuple(parameters)).fetchall()

    def _has_table(self, name: str) -> bool:
        """Whether the manifest has the table ``name``: one added after the first
        release is missing from a read-only manifest written before it."""
        return bool(self._rows("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)))

    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's ``data_version``)."""
        return int(self._rows("PRAGMA data_version")[0][0])

    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def forget_meta(self, key: str) -> None:
        self._execute("DELETE FROM meta WHERE key = ?", (key,))

    def meta_values(self, prefix: str) -> list[str]:
        """The values of the notes whose key starts with ``prefix``."""
        query = "SELECT value FROM meta WHERE substr(key, 1, ?) = ?"
        return [str(row[0]) for row in self._rows(query, (len(prefix), prefix))]

    def file(self, content_hash: str) -> FileRecord | None:
        rows = self._rows(
            "SELECT content_hash, status, node_count, duration, notes, error FROM files "
            "WHERE content_hash = ?",
            (content_hash,),
        )
        return FileRecord(*rows[0]) if rows else None

    def files(self, status: Status | None = None) -> list[FileRecord]:
        query = "SELECT content_hash, status, node_count, duration, notes, error FROM files"
        rows = self._rows(query + " WHERE status = ?", (status,)) if status else self._rows(query)
        return [FileRecord(*row) for row in rows]

    def lists_nothing(self) -> bool:
        """Whether no content is recorded at all, not even one being removed: a new
        index, or a manifest emptied or lost (SQLite reads a 0-byte file as an empty
        database, and this class then creates the tables in it)."""
        if self._rows("SELECT 1 FROM files LIMIT 1"):
            return False
        return not self._rows("SELECT 1 FROM removals LIMIT 1")

    def indexed_node_total(self) -> int:
        """How many rows the vector store holds at least: the indexed contents' nodes."""
        rows = self._rows("SELECT coalesce(sum(node_count), 0) FROM files WHERE status = 'indexed'")
        return int(rows[0][0])

    def indexed_among(self, content_hashes: Collection[str]) -> set[str]:
        """Those of ``content_hashes`` whose rows are complete (status ``indexed``)."""
        if not content_hashes:
            return set()
        marks = ",".join("?" * len(content_hashes))
        rows = self._rows(
            "SELECT content_hash FROM files "
            f"WHERE status = 'indexed' AND content_hash IN ({marks})",
            content_hashes,
        )
        return {str(row[0]) for row in rows}

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
        self._execute(
            "INSERT OR REPLACE INTO files "
            "(content_hash, status, node_count, duration, notes, error, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (content_hash, status, node_count, duration, scrub(notes), scrub(error), time.time()),
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
        self._execute("DELETE FROM files WHERE content_hash = ?", (content_hash,))
        self._execute("DELETE FROM failed_paths WHERE content_hash = ?", (content_hash,))

    def set_failed_path(self, content_hash: str, path: str) -> None:
        """Keep where the failed content ``content_hash`` was read from."""
        self._execute(
            "INSERT OR REPLACE INTO failed_paths (content_hash, path) VALUES (?, ?)",
            (content_hash, path),
        )

    def failed_path(self, content_hash: str) -> str | None:
        """Where the failed content was read from (None when not kept: a failure recorded
        before these were, or a read-only manifest from before them)."""
        if not self._has_table("failed_paths"):
            return None
        rows = self._rows("SELECT path FROM failed_paths WHERE content_hash = ?", (content_hash,))
        return str(rows[0][0]) if rows else None

    def path(self, path: str) -> PathRecord | None:
        rows = self._rows(
            "SELECT path, source, content_hash, size, mtime_ns FROM paths WHERE path = ?", (path,)
        )
        return PathRecord(*rows[0]) if rows else None

    def paths_of(self, content_hash: str) -> list[PathRecord]:
        rows = self._rows(
            "SELECT path, source, content_hash, size, mtime_ns FROM paths "
            "WHERE content_hash = ? ORDER BY path",
            (content_hash,),
        )
        return [PathRecord(*row) for row in rows]

    def held_by_no_path(self, content_hash: str, *, but: str | None = None) -> bool:
        """Whether no path (none but ``but``) names the content: then it is forgotten,
        its rows and media deleted."""
        return all(record.path == but for record in self.paths_of(content_hash))

    def set_path(self, record: PathRecord) -> None:
        self._execute(
            "INSERT OR REPLACE INTO paths (path, source, content_hash, size, mtime_ns) "
            "VALUES (?, ?, ?, ?, ?)",
            (record.path, record.source, record.content_hash, record.size, record.mtime_ns),
        )

    def located(self, record: PathRecord) -> str:
        """Where the file of ``record`` is now: its recorded path, or for a download this
        folder's copy (the folder has moved; see
        :func:`~llama_index_video.store.media_paths.resolved_source`)."""
        return resolved_source(record.path, self.db_file.parent)

    def forget_path(self, path: str) -> None:
        self._execute("DELETE FROM paths WHERE path = ?", (path,))

    def add_pending(self, item: PendingNode) -> None:
        self._execute(
            "INSERT OR REPLACE INTO pending "
            "(node_id, content_hash, node_type, node_json, error, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                item.node_id,
                item.content_hash,
                item.node_type,
                item.node_json,
                scrub(item.error),
                time.time(),
            ),
        )

    def pending(self, content_hash: str) -> list[PendingNode]:
        rows = self._rows(
            "SELECT node_id, content_hash, node_type, node_json, error FROM pending "
            "WHERE content_hash = ? ORDER BY node_id",
            (content_hash,),
        )
        return [PendingNode(*row) for row in rows]

    def forget_pending(self, content_hash: str, node_ids: list[str] | None = None) -> None:
        """Forget a content's pending nodes (all, or those in ``node_ids``)."""
        if node_ids is None:
            self._execute("DELETE FROM pending WHERE content_hash = ?", (content_hash,))
            return
        with translated(self.db_file):
            self._db.executemany(
                "DELETE FROM pending WHERE content_hash = ? AND node_id = ?",
                [(content_hash, node_id) for node_id in node_ids],
            )

    def add_removal(self, content_hash: str) -> None:
        """Record that a forgotten content's rows and media are still to be deleted."""
        self._execute("INSERT OR IGNORE INTO removals (content_hash) VALUES (?)", (content_hash,))

    def removals(self) -> list[str]:
        return [str(row[0]) for row in self._rows("SELECT content_hash FROM removals")]

    def forget_removal(self, content_hash: str) -> None:
        self._execute("DELETE FROM removals WHERE content_hash = ?", (content_hash,))

    def summaries(self) -> dict[str, ContentSummary]:
        """The summary of every content whose record has not changed since it was
        summarised (none in a read-only manifest from before summaries)."""
        if not self._has_table("summaries"):
            return {}
        rows = self._rows(
            "SELECT s.content_hash, s.moments, s.language, s.speakers "
            "FROM summaries s JOIN files f ON f.content_hash = s.content_hash "
            "WHERE f.updated_at = s.files_updated_at"
        )
        return {
            str(key): ContentSummary(json.loads(moments), language, json.loads(speakers))
            for key, moments, language, speakers in rows
        }

    def set_summary(self, content_hash: str, summary: ContentSummary) -> None:
        """Keep ``summary`` for the content's present record (nothing when it has none,
        or the manifest may not be written); summaries of forgotten contents go. While
        a version is held (:meth:`hold`, as a reader counting a summary does) it goes to
        the file all the same, and the hold goes on."""
        if self.read_only:
            return
        with translated(self.db_file):
            _keep_summary(self._file, content_hash, summary)


def _keep_summary(db: sqlite3.Connection, content_hash: str, summary: ContentSummary) -> None:
    db.execute("DELETE FROM summaries WHERE content_hash NOT IN (SELECT content_hash FROM files)")
    db.execute(
        "INSERT OR REPLACE INTO summaries "
        "(content_hash, files_updated_at, moments, language, speakers) "
        "SELECT content_hash, updated_at, ?, ?, ? FROM files WHERE content_hash = ?",
        (
            json.dumps(summary.moments, sort_keys=True),
            summary.language,
            json.dumps(summary.speakers),
            content_hash,
        ),
    )


def connect_read_only(
    path: Path, *, probe: str = "SELECT count(*) FROM files"
) -> tuple[sqlite3.Connection, bool]:
    """A connection to the manifest ``path`` (or, with another ``probe`` query that
    must succeed on it, any SQLite file) that never writes to its folder.

    Returns:
        The connection, and whether SQLite reads the file as immutable: it could not
        take its read locks (no ``-shm`` file exists or may be created), so it will not
        see what other connections commit (``PRAGMA data_version`` never changes).

    Raises:
        IndexReadOnlyError: SQLite cannot read the file even as immutable.
    """
    for immutable in (False, True):
        db = _connect(path, "?mode=ro&immutable=1" if immutable else "?mode=ro")
        try:
            db.execute(probe).fetchone()
        except sqlite3.OperationalError as exc:
            db.close()
            if not _cannot_write(exc):
                raise
            continue
        return db, immutable
    raise read_only(path)


def _connect(path: Path, query: str = "") -> sqlite3.Connection:
    target = f"{path.absolute().as_uri()}{query}" if query else str(path)
    return sqlite3.connect(
        target,
        uri=bool(query),
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_S,
    )


def _cannot_write(exc: BaseException) -> bool:
    """Whether ``exc`` says the database or its folder may not be written here."""
    if isinstance(exc, (PermissionError, IndexReadOnlyError)):
        return True
    text = str(exc).lower()
    return any(
        words in text
        for words in ("readonly", "read-only", "unable to open database", "permission denied")
    )
