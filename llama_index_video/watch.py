"""Folders that index themselves: ``llama-index-video watch`` and ``serve --watch``.

A :class:`FolderWatcher` keeps an index in step with folders. A supported file that
appears or changes is ingested once it has stopped growing: the same size and
modification time for ``settle`` seconds, so a recorder or a copy still writing it is
left alone. A file that disappears has its moments removed (its content stays while
another indexed path holds it, so a move is an ingest that finds the content, then a
removal that keeps it). A burst of files is ingested in one run, each file once, and
each file's outcome is reported as soon as it is known.

Changes come from the operating system's file events through ``watchfiles`` (inotify,
FSEvents, ReadDirectoryChangesW); ``poll`` seconds makes it scan instead, for network
mounts that send no events. A first look at start catches what changed while nobody
watched: every supported file is handed to the ingest (which skips unchanged ones by
size and modification time) and indexed sources under the folders whose files are gone
are removed.

All writing goes through :meth:`VideoIndex.ingest` and :meth:`VideoIndex.remove`, so
through the folder's writer lock: one writer at a time, whoever it is. A busy index
leaves the files pending for the next round. The watcher's loop ends by construction:
when ``stop`` is set (the command sets it on Ctrl-C and SIGTERM, then finishes the
ingest under way) or ``max_seconds`` after it started.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import IndexBusyError, MissingDependencyError, VideoIndexError
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.store.ingest_report import FileOutcome

logger = logging.getLogger(__name__)

DEFAULT_SETTLE_SECONDS = 2.0
TICK_SECONDS = 0.5
"""How often pending files are looked at when no event comes."""


@dataclass(frozen=True)
class WatchEvent:
    """What the watcher did about one file: ``indexed``, ``skipped``, ``failed``,
    ``removed`` or ``waiting`` (the index was busy; tried again later)."""

    action: str
    path: Path
    detail: str = ""


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    since: float  # monotonic time it was last seen changing


class FolderWatcher:
    """Ingests what appears or changes in ``folders`` and removes what disappears.

    Args:
        index: The index written to (its reader decides how files are read).
        folders: Folders watched recursively.
        settle: Seconds a file's size and modification time must stay the same before
            it is ingested.
        poll: Scan every this many seconds instead of waiting for file events (network
            mounts); None: file events.
        wait: Seconds each ingest or removal waits for another writer of the index.
        report: Told of every file's outcome.
    """

    def __init__(
        self,
        index: VideoIndex,
        folders: Sequence[str | Path],
        *,
        settle: float = DEFAULT_SETTLE_SECONDS,
        poll: float | None = None,
        wait: float = DEFAULT_WAIT_SECONDS,
        report: Callable[[WatchEvent], None] | None = None,
    ) -> None:
        if not folders:
            raise ValueError("give at least one folder to watch")
        if settle < 0 or (poll is not None and poll <= 0):
            raise ValueError("settle must be >= 0 and poll > 0")
        missing = [str(f) for f in folders if not Path(f).is_dir()]
        if missing:
            raise VideoIndexError(f"{', '.join(missing)}: not a folder; nothing to watch")
        from llama_index_video.reader.options import SUPPORTED_SUFFIXES

        self.index = index
        self._suffixes = SUPPORTED_SUFFIXES
        self.folders = [Path(f).resolve() for f in folders]
        self.settle = settle
        self.poll = poll
        self.wait = wait
        self._report = report or (lambda event: None)
        self._own = index.path.resolve()
        self._pending: dict[Path, _Seen] = {}
        self._done: dict[Path, tuple[int, int]] = {}  # size, mtime of what was last ingested

    def run(self, stop: threading.Event, *, max_seconds: float | None = None) -> None:
        """Watch until ``stop`` is set or ``max_seconds`` have passed.

        Raises:
            MissingDependencyError: ``watchfiles`` is not installed.
        """
        from llama_index_video.store.file_walk import expand_paths

        try:
            from watchfiles import watch
        except ImportError as exc:
            raise MissingDependencyError("watchfiles", "watch", "Watching folders") from exc
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        changes = self._changes(watch, stop)
        # The first batch starts the watcher; only then are the folders scanned, so a file
        # written meanwhile is seen by one or the other (both: one pending entry).
        first = next(changes, [])
        self._look([*first, *expand_paths(self.folders)])
        self._remove_gone()
        for paths in changes:
            if stop.is_set() or (deadline is not None and time.monotonic() >= deadline):
                break
            paths = [p for p in paths if self._own != p and self._own not in p.parents]
            self._look(paths)
            if any(not p.exists() for p in paths):
                self._remove_gone()
            self._ingest_settled()

    def _changes(self, watch: Any, stop: threading.Event) -> Iterator[list[Path]]:
        """The paths that changed, at least every :data:`TICK_SECONDS` (empty when none)."""
        tick_ms = int(TICK_SECONDS * 1000)
        for found in watch(
            *self.folders,
            stop_event=stop,
            yield_on_timeout=True,
            rust_timeout=tick_ms,
            debounce=tick_ms,
            force_polling=self.poll is not None,
            poll_delay_ms=int((self.poll or TICK_SECONDS) * 1000),
            raise_interrupt=False,
            watch_filter=None,
        ):
            yield [Path(path) for _, path in found]

    def _wanted(self, path: Path) -> bool:
        """A supported file, not hidden, not a partial download (``talk.mp4.part`` has
        another suffix), not in the index folder."""
        if path.suffix.lower() not in self._suffixes or self._own in path.parents:
            return False
        folder = next((f for f in self.folders if f in path.parents), None)
        inside = path.relative_to(folder).parts if folder else (path.name,)
        return not any(part.startswith((".", "~")) for part in inside)

    def _look(self, paths: Iterable[Path]) -> None:
        """Start or keep timing each file's settling; folders that appear are expanded."""
        now = time.monotonic()
        for path in paths:
            if path.is_dir():
                from llama_index_video.store.file_walk import expand_paths

                self._look(expand_paths([path]))
                continue
            if not self._wanted(path):
                continue
            try:
                stat = path.stat()
            except OSError:
                self._pending.pop(path, None)
                continue
            state = (stat.st_size, stat.st_mtime_ns)
            seen = self._pending.get(path)
            if seen is None and self._done.get(path) == state:
                continue  # an event about a file already ingested as it is
            if seen is None or (seen.size, seen.mtime_ns) != state:
                self._pending[path] = _Seen(*state, since=now)

    def _ingest_settled(self) -> None:
        self._look(list(self._pending))  # a file that grew since is timed again
        now = time.monotonic()
        ready = sorted(p for p, s in self._pending.items() if now - s.since >= self.settle)
        if not ready:
            return
        told: set[Path] = set()

        def tell(outcome: FileOutcome) -> None:
            told.add(outcome.path)
            count = outcome.moments if outcome.outcome == "indexed" else ""
            detail = "; ".join(part for part in (count, outcome.reason) if part)
            self._report(WatchEvent(outcome.outcome, outcome.path, detail))

        try:
            self.index.ingest(ready, wait=self.wait, on_file=tell)
        except IndexBusyError as exc:
            for path in ready:
                self._pending[path].since = now  # tried again once settled again
                self._report(WatchEvent("waiting", path, str(exc)))
            return
        except VideoIndexError as exc:  # disk full, read-only...: said, then the next change
            for path in ready:
                self._pending.pop(path)
                if path not in told:
                    self._report(WatchEvent("failed", path, str(exc)))
            return
        for path in ready:  # done as they were, whatever the report says of each
            seen = self._pending.pop(path)
            self._done[path] = (seen.size, seen.mtime_ns)

    def _remove_gone(self) -> None:
        """Remove the indexed sources under the folders whose files are gone."""
        for record in self.index.manifest.all_paths():
            path = Path(self.index.manifest.located(record))
            if not any(f in path.parents for f in self.folders) or os.path.exists(path):
                continue
            self._pending.pop(path, None)
            self._done.pop(path, None)
            try:
                if self.index.remove(path, wait=self.wait):
                    self._report(WatchEvent("removed", path))
            except IndexBusyError as exc:
                self._report(WatchEvent("waiting", path, str(exc)))
