"""One writer at a time: the index folder's writer lock.

``ingest`` and ``verify --repair`` hold an exclusive ``flock`` on ``<index>/write.lock``
for as long as they write, and record in the file who holds it (pid, host, start time)
so the process that has to wait can say whom it waits for. The kernel releases the
lock when its holder exits, however it exits (``kill -9`` included), so holding the
lock proves every earlier writer is gone: what an earlier run left half-done was
*interrupted*, and may be cleaned up, never a live run's work in progress.

Every writer also counts itself in the file: the record carries a *write generation*,
one more than the last writer's (a new file's first at random), and keeps it (without
the holder) when released. A
process that loaded the vector index reads the generation first
(:func:`read_generation`); taking the lock later it compares
(:attr:`WriterLock.generation_before`) and knows whether anyone wrote in between, so
that it never writes from a copy of the index loaded before another writer's rows
(see :mod:`llama_index_video.store.folder`). A generation read while a writer held the
lock, or left by one that did not finish, counts as unknown: the state on disk may
have changed after it was read.

Waiting: :meth:`WriterLock.acquire` polls for at most ``wait`` seconds (0: fail at
once) and then raises :class:`IndexBusyError` naming the holder. The file is never
deleted (deleting it would let two processes lock two different files). Readers take
no lock: they only ever see what a writer has committed (see
:mod:`llama_index_video.store.ingest`).

The commit step: what a run deletes of the version readers hold (the rows, media and
words of a file it replaced or removed) it deletes only at the end of the run, in a
short step it announces in the record (:meth:`WriterLock.committing`). Reads of the
folder in place hold ``read.lock`` shared while they run (:mod:`llama_index_video.store.lease`);
the commit step takes it exclusively once announced, so it waits for the reads in
progress (at most :data:`COMMIT_WAIT_SECONDS`), and a read that finds the step announced
waits for it to end (:func:`wait_for_commit`, as long at most) and then loads the
version it finished. So no read in place meets half of a version.

``flock`` works on local file systems and on NFS (Linux emulates it with byte-range
locks there); on a file system without locking the lock cannot be taken and ingest
fails with that reason rather than writing unprotected.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from llama_index_video.errors import IndexBusyError, IndexCorruptError, IndexStorageError
from llama_index_video.store.storage_errors import storage_error

logger = logging.getLogger(__name__)

LOCK_NAME = "write.lock"
READERS_NAME = "read.lock"
"""Held shared by reads of the folder in place, exclusively by a writer's commit step."""
COMMIT_WAIT_SECONDS = 30.0
"""How long a commit step waits for the reads in progress, and a read for a commit step."""
COMMIT_POLL_SECONDS = 0.02
DEFAULT_WAIT_SECONDS = 600.0
"""How long a writer waits for another writer of the same folder before giving up."""
POLL_SECONDS = 0.2


class WriterLock:
    """The exclusive writer lock of the index folder ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._fd: int | None = None
        self.previous_holder = ""
        """Who held the lock last, if the record was left behind (an interrupted run)."""
        self.generation_before: int | None = None
        """The write generation the last writer finished (None: unknown, see above)."""
        self.generation = 0
        """This writer's generation, while it holds the lock."""
        self._record: dict[str, object] = {}
        self._readers_fd: int | None = None

    def acquire(self, *, wait: float) -> None:
        """Take the lock, waiting at most ``wait`` seconds for the current holder.

        Raises:
            IndexBusyError: another process still holds it after ``wait`` seconds.
            IndexReadOnlyError: the folder cannot be written.
        """
        if self._fd is not None:
            raise RuntimeError("the writer lock is already held by this object")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _translated(exc, self.path) from exc
        try:
            self._wait_for(fd, wait)
            before = os.pread(fd, 4096, 0)
            self.previous_holder = _describe(before)
            self.generation_before = _finished_generation(before)
            previous = _generation(before)
            self.generation = (_first_count() if previous is None else previous) + 1
            self._record = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "since": time.time(),
                "generation": self.generation,
            }
            _rewrite(fd, self._record)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def committing(self, *, wait: float = COMMIT_WAIT_SECONDS) -> None:
        """Begin the run's commit step (see the module docstring): announce it, then wait
        for the reads of the folder in progress, at most ``wait`` seconds (a read still
        running then is logged and the step goes on). Held until :meth:`release`."""
        if self._fd is None:
            raise RuntimeError("the commit step needs the writer lock held")
        if self._readers_fd is not None:
            return
        _rewrite(self._fd, {**self._record, "committing": True})
        fd = readers_file(self.path.parent)
        if fd is None:
            return
        self._readers_fd = fd
        if not flock_within(fd, fcntl.LOCK_EX, wait):
            logger.warning(
                "%s: a read still running after %.0f s; committing all the same",
                self.path.parent,
                wait,
            )

    def release(self) -> None:
        """Give the lock up (the holder is cleared from the record first, so nobody is
        named as holder; the generation stays)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            _rewrite(fd, {"generation": self.generation})
        except OSError:  # the lock is released by close() all the same
            logger.debug("could not clear %s", self.path, exc_info=True)
        finally:
            os.close(fd)
            if self._readers_fd is not None:  # after the version is marked finished
                os.close(self._readers_fd)
                self._readers_fd = None

    def holder(self) -> str:
        """Who holds the lock now ("" when nobody does)."""
        record = _held_record(self.path)
        return "" if record is None else _describe(record) or "another writer"

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def _wait_for(self, fd: int, wait: float) -> None:
        deadline = time.monotonic() + max(0.0, wait)
        announced = False
        while True:  # ends: each pass sleeps, and the deadline is fixed
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            except OSError as exc:
                raise _translated(exc, self.path) from exc
            holder = _describe(os.pread(fd, 4096, 0)) or "another writer"
            left = deadline - time.monotonic()
            if left <= 0:
                raise IndexBusyError(
                    f"{self.path.parent}: {holder} is writing to this index; "
                    "run again when it has finished (or pass --wait SECONDS to wait for it)"
                )
            if not announced:
                logger.warning(
                    "%s: waiting up to %.0f s for %s to finish writing",
                    self.path.parent,
                    wait,
                    holder,
                )
                announced = True
            time.sleep(min(POLL_SECONDS, left))


def read_generation(folder: Path) -> int | None:
    """The write generation of the index folder ``folder`` as the last finished writer
    left it (0: no writer has taken the lock yet); None when unknown (a writer holds
    the lock or did not finish). Reads only: works on a read-only folder."""
    try:
        with (folder / LOCK_NAME).open("rb") as handle:
            return _finished_generation(handle.read(4096))
    except FileNotFoundError:
        return 0
    except OSError:
        return None


def committing(folder: Path) -> bool:
    """Whether a writer of the index folder ``folder`` is in its commit step. The record
    of a writer killed in it says so until the next writer: it counts only while the
    lock is held (else every read would wait for a step that never ends)."""
    record = _held_record(folder / LOCK_NAME)
    data = None if record is None else _parsed(record)
    return bool(data and data.get("committing"))


def _held_record(path: Path) -> bytes | None:
    """The record of the lock file ``path`` while a writer holds the lock; None when
    nobody does, or it cannot be read or locked (no writer can hold it there either)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 4096, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def flock_within(fd: int, operation: int, wait: float) -> bool:
    """``flock(fd, operation)`` (``LOCK_SH`` or ``LOCK_EX``), trying for at most ``wait``
    seconds; False when it is still held elsewhere then, or cannot be locked at all (a
    file system without ``flock``)."""
    deadline = time.monotonic() + wait
    while True:  # ends: each pass sleeps, and the deadline is fixed
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
        except OSError:
            return False
        time.sleep(COMMIT_POLL_SECONDS)


def wait_for_commit(folder: Path, *, wait: float = COMMIT_WAIT_SECONDS) -> None:
    """Wait, at most ``wait`` seconds, while a writer of ``folder`` is in its commit step.

    Raises:
        IndexBusyError: it is still committing then.
    """
    deadline = time.monotonic() + wait
    while committing(folder):  # ends: each pass sleeps, and the deadline is fixed
        if time.monotonic() >= deadline:
            raise IndexBusyError(
                f"{folder}: {WriterLock(folder).holder() or 'a writer'} is still "
                f"finishing its write after {wait:.0f} s; read again when it has finished"
            )
        time.sleep(COMMIT_POLL_SECONDS)


def readers_file(folder: Path) -> int | None:
    """An open descriptor of ``folder``'s ``read.lock`` (made if missing), to ``flock``;
    None where it cannot be opened (a read-only folder that has none)."""
    try:
        return os.open(folder / READERS_NAME, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        try:
            return os.open(folder / READERS_NAME, os.O_RDONLY)
        except OSError:
            return None


def caused_by_a_writer(exc: BaseException) -> bool:
    """Whether ``exc`` is what a read raises when a writer changes the folder under it:
    Chroma's ``InternalError`` (``Error finding id``: rows its loaded vector index does
    not know), a half-done state taken for damage, or a read that said so already.
    Checked without importing ``chromadb``: an error of it means it is imported already."""
    if isinstance(exc, IndexBusyError | IndexCorruptError):
        return True
    errors = sys.modules.get("chromadb.errors")
    return errors is not None and isinstance(exc, errors.InternalError)


def _rewrite(fd: int, record: dict[str, object]) -> None:
    """Replace the record. Written over the old one, then cut to its length: a reader
    never sees an empty file (which reads as generation 0, finished) while a writer
    holds the lock; a read torn between the two steps is not JSON, so unknown."""
    data = json.dumps(record).encode()
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def _parsed(record: bytes) -> dict[str, Any] | None:
    """The record at the start of the file; what follows it is ignored: a writer killed
    between :func:`_rewrite`'s two steps leaves a record followed by the end of the
    longer one before it. None: no record can be read (a read torn mid-write)."""
    try:
        data, _end = json.JSONDecoder().raw_decode(record.decode())
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _generation(record: bytes) -> int | None:
    data = _parsed(record)
    try:
        return None if data is None else int(data["generation"])
    except (ValueError, KeyError, TypeError):
        return None


def _first_count() -> int:
    """Where a new lock file's count starts: at random, not at 0, so that a folder
    removed and made again (its lock file with it) does not count the generations a
    long-lived reader loaded from the removed one (it took the new folder's for those,
    and kept answering from the removed one)."""
    return secrets.randbelow(1 << 40)


def _finished_generation(record: bytes) -> int | None:
    """The generation of a record no writer holds (a holder's pid in it: None; an
    empty record, as a new lock file or an earlier version's released one holds: 0)."""
    if not record:
        return 0
    data = _parsed(record)
    return None if data is None or "pid" in data else _generation(record)


def _describe(record: bytes) -> str:
    """``"pid 123 on host-a (since 05:40:01 UTC)"`` from a lock record ("" if none);
    ``"another thread of this process (pid 123, since ...)"`` for this process's own
    (two locks of one process exclude each other as two processes' do)."""
    data = _parsed(record)
    if data is None:
        return ""
    try:
        since = time.strftime("%H:%M:%S UTC", time.gmtime(float(data["since"])))
        pid, host = int(data["pid"]), str(data["host"])
    except (ValueError, KeyError, TypeError):
        return ""
    if pid == os.getpid() and host == socket.gethostname():
        return f"another thread of this process (pid {pid}, since {since})"
    return f"pid {pid} on {host} (since {since})"


def _translated(exc: OSError, path: Path) -> IndexStorageError:
    error = storage_error(exc, path)
    if error is not None:
        return error
    return IndexBusyError(
        f"{path}: cannot take the writer lock ({exc.strerror or exc}); "
        "the index folder must be on a file system with file locking"
    )
