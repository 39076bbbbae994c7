"""Many readers at once, or one that swaps what they read: a read-write lease.

An index folder's vectors are loaded once per process (Chroma keeps one open database
per folder), and loading them afresh, to see what another process wrote, drops that
database: a search another thread is running on it would fail. So every read of a
``VideoIndex`` holds its folder's lease shared (:func:`folder_lease`: one per folder
and process) and a reload holds it exclusively; ``serve`` swaps the version it serves
under a lease of its own (:mod:`llama_index_video.service.live`).

A waiting swap holds new readers back, so a stream of reads cannot starve it. A thread
may read again inside its own read (one read, counted once); it may not swap inside
it, which would wait for itself: :meth:`ReadWriteLease.reading_here` tells it so.

Other processes: while any read of the folder runs in this process, the folder's lease
holds ``read.lock`` shared (one ``flock`` per process, taken by the first read and let
go by the last), so that a writer's commit step, which deletes what it replaced, waits
for the reads in progress (:mod:`llama_index_video.store.lock`).
"""

from __future__ import annotations

import fcntl
import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llama_index_video.store.lock import COMMIT_WAIT_SECONDS, flock_within, readers_file


class ReadWriteLease:
    """Many readers at once, or one writer; a waiting writer holds new readers back.

    Args:
        folder: The index folder whose ``read.lock`` the readers hold shared (see the
            module docstring); None: a lease within this process only.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._here = threading.local()
        self._folder = folder
        self._file: int | None = None

    def reading_here(self) -> bool:
        """Whether this thread holds the lease shared."""
        return bool(getattr(self._here, "depth", 0))

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the lease with the other readers (again, inside this thread's own read)."""
        depth = getattr(self._here, "depth", 0)
        if not depth:
            with self._cond:
                self._cond.wait_for(lambda: not self._writer and not self._writers_waiting)
                if not self._readers:
                    self._share_folder()
                self._readers += 1
        self._here.depth = depth + 1
        try:
            yield
        finally:
            self._here.depth = depth
            if not depth:
                with self._cond:
                    self._readers -= 1
                    if not self._readers and self._file is not None:
                        os.close(self._file)  # lets the flock go
                        self._file = None
                    self._cond.notify_all()

    def _share_folder(self) -> None:
        """The first read of this process: hold the folder's ``read.lock`` shared, waiting
        (at most :data:`COMMIT_WAIT_SECONDS`) while a commit step holds it; after that,
        or where it cannot be locked, the read goes on without it."""
        if self._folder is None:
            return
        fd = readers_file(self._folder)
        if fd is None:
            return
        if flock_within(fd, fcntl.LOCK_SH, COMMIT_WAIT_SECONDS):
            self._file = fd
        else:
            os.close(fd)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lease alone, once the reads in progress have ended.

        Raises:
            RuntimeError: this thread holds it shared (it would wait for itself).
        """
        if self.reading_here():
            raise RuntimeError("cannot swap the index inside a read of it on the same thread")
        with self._cond:
            self._writers_waiting += 1
            self._cond.wait_for(lambda: not self._writer and not self._readers)
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


_FOLDERS: weakref.WeakValueDictionary[Path, ReadWriteLease] = weakref.WeakValueDictionary()
"""Kept while someone holds or waits for it: a service's private copies come and go."""
_MADE = threading.Lock()


def folder_lease(folder: Path) -> ReadWriteLease:
    """The lease of the index folder ``folder`` in this process."""
    key = folder.absolute()
    with _MADE:
        lease = _FOLDERS.get(key)
        if lease is None:
            lease = _FOLDERS[key] = ReadWriteLease(key)
        return lease
