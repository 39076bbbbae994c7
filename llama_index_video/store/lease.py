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
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class ReadWriteLease:
    """Many readers at once, or one writer; a waiting writer holds new readers back."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._here = threading.local()

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
                self._readers += 1
        self._here.depth = depth + 1
        try:
            yield
        finally:
            self._here.depth = depth
            if not depth:
                with self._cond:
                    self._readers -= 1
                    self._cond.notify_all()

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
            lease = _FOLDERS[key] = ReadWriteLease()
        return lease
