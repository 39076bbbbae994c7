"""``llama-index-video watch`` and ``serve --watch``: folders that index themselves;
``ingest --live``: a recording indexed while it grows.

``watch`` runs a :class:`~llama_index_video.watch.FolderWatcher` in this process and
prints one line per file. Ctrl-C or SIGTERM stops it once the ingest under way is done
(a second one stops at once; the next run resumes, like an interrupted ``ingest``).
``serve --watch DIR`` runs ``watch`` as a child process beside the service, so writing
never shares a process with serving, and stops it with SIGTERM when the service ends.
A service killed outright (``kill -9``) cannot do that, so the child is told its
parent's pid (``--parent-pid``, not shown in the help) and stops the same way, once
the ingest under way is done, when its parent is gone: it looks every
:data:`PARENT_POLL_SECONDS` (``os.getppid()`` changes when a parent dies, on every
POSIX system, where ``PR_SET_PDEATHSIG`` is Linux only).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import VideoIndexError, printable_path

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.live import LiveChunk
    from llama_index_video.store.ingest_report import IngestReport
    from llama_index_video.watch import WatchEvent

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
CHILD_STOP_SECONDS = 60.0
"""How long ``serve`` waits for its watcher to finish an ingest after SIGTERM."""
PARENT_POLL_SECONDS = 1.0
"""How often a watcher started by ``serve`` checks that the service is still there."""


def run_watch(args: argparse.Namespace, index: VideoIndex) -> int:
    from llama_index_video.watch import FolderWatcher

    try:
        watcher = FolderWatcher(
            index, args.folders, settle=args.settle, poll=args.poll, wait=args.wait, report=_print
        )
    except ValueError as exc:
        raise VideoIndexError(f"bad watch option: {exc}") from exc
    stop = threading.Event()
    shown = ", ".join(printable_path(folder) for folder in watcher.folders)
    print(f"watching {shown} -> {printable_path(args.index)}; Ctrl-C stops", flush=True)
    if args.parent_pid is not None:
        threading.Thread(
            target=_stop_when_orphaned, args=(args.parent_pid, stop), daemon=True
        ).start()
    try:
        with _stopping_on_signals(stop):
            watcher.run(stop)
    finally:
        stop.set()  # ends the parent check too
    print("stopped", flush=True)
    return 0


def _stop_when_orphaned(parent: int, stop: threading.Event) -> None:
    """Set ``stop`` once ``parent`` is no longer this process's parent; ends with ``stop``."""
    while not stop.wait(PARENT_POLL_SECONDS):
        if os.getppid() != parent:
            print("the service is gone; stopping after the ingest under way", flush=True)
            stop.set()


def run_live(args: argparse.Namespace, index: VideoIndex) -> IngestReport:
    """``ingest --live PATH|URL``: a line per chunk stored; returns the final ingest's report."""
    from llama_index_video.live import ingest_live
    from llama_index_video.sources.origin import redact
    from llama_index_video.sources.stream import is_stream

    if len(args.paths) != 1:
        raise VideoIndexError("ingest --live takes one file being recorded, or one stream URL")
    source: str | Path = args.paths[0]
    if is_stream(args.paths[0]):
        shown = redact(args.paths[0])
    else:
        source = Path(args.paths[0])
        shown = printable_path(source)
    stop = threading.Event()
    print(f"following {shown} -> {printable_path(args.index)}", flush=True)
    with _stopping_on_signals(stop):
        try:
            report = ingest_live(
                index,
                source,
                chunk_seconds=args.chunk_seconds,
                settle=args.live_settle,
                max_seconds=args.max_hours * 3600,
                max_bytes=args.max_bytes,
                wait=args.wait,
                stop=stop,
                report=_print_chunk,
            )
        except ValueError as exc:
            raise VideoIndexError(f"bad --live option: {exc}") from exc
    return report


def _print_chunk(chunk: LiveChunk) -> None:
    units = f"{chunk.units} unit{'' if chunk.units == 1 else 's'}"
    print(f"{'live':8} {chunk.start:.0f}-{chunk.end:.0f} s: {units}", flush=True)


def _print(event: WatchEvent) -> None:
    detail = f" ({event.detail})" if event.detail else ""
    print(f"{event.action:8} {printable_path(event.path)}{detail}", flush=True)


@contextmanager
def _stopping_on_signals(stop: threading.Event) -> Iterator[None]:
    """Ctrl-C and SIGTERM set ``stop``; a second one interrupts at once."""

    def handle(number: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("stopping after the ingest under way; again to stop at once", flush=True)

    previous = {number: signal.signal(number, handle) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def watching(folders: Sequence[Path], index_dir: Path, store: dict[str, Any]) -> Iterator[None]:
    """``watch folders --index index_dir`` in a child process while the block runs."""
    if not folders:
        yield
        return
    command = [sys.executable, "-m", "llama_index_video.cli.main", "watch", *map(str, folders)]
    command += ["--index", str(index_dir), f"--parent-pid={os.getpid()}"]
    command += [f"--{k.replace('_', '-')}={v}" for k, v in store.items() if v]
    child = subprocess.Popen(command)  # its lines go to this terminal
    # uvicorn handles SIGTERM itself, then raises it again once the service has stopped,
    # with the handler it found: this one, so the block is left through ``finally``.
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=CHILD_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _exit(number: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
