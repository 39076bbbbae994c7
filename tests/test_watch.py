"""Folders that index themselves: files created, grown, replaced, removed and dropped in a
burst, with file events and by polling, and the ``watch`` command stopped by SIGTERM.

The watcher runs in a thread over a real index; the tests wait for what it reports, each
wait bounded, and check the index once it has stopped.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from llama_index_video.errors import VideoIndexError
from llama_index_video.watch import FolderWatcher, WatchEvent
from tests_support import ROOT, TEAM_SYNC

WAIT_SECONDS = 120.0  # bounded, generous: the tests share 2 cores with other work


class Running:
    """A watcher in a thread and what it reported."""

    def __init__(self, watcher: FolderWatcher) -> None:
        self.watcher = watcher
        self.events: list[WatchEvent] = []
        self.stop = threading.Event()

    def of(self, action: str) -> list[Path]:
        return [e.path for e in list(self.events) if e.action == action]

    def until(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not done():
            assert time.monotonic() < deadline, f"{what} not seen in {WAIT_SECONDS:g} s"
            time.sleep(0.1)


@pytest.fixture
def index(tmp_path, embed_model, script_transcriber):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    path = tmp_path / "index"
    opened = VideoIndex(
        path,
        embed_model=embed_model,
        reader=VideoReader(media_dir=path / "media", frames=None, transcriber=script_transcriber),
    )
    yield opened
    opened.close()


@contextmanager
def watching(
    index, folder: Path, *, seen: Callable[[WatchEvent], None] | None = None, **options
) -> Iterator[Running]:
    """A watcher of ``folder`` running while the block runs; ``seen`` is told each event
    as it is reported."""
    running = Running(FolderWatcher(index, [folder], settle=0.5, **options))

    def report(event: WatchEvent) -> None:  # what the command would print
        if seen is not None:
            seen(event)
        running.events.append(event)

    running.watcher._report = report
    thread = threading.Thread(target=running.watcher.run, args=(running.stop,), daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop.set()
        thread.join(timeout=WAIT_SECONDS)
        assert not thread.is_alive(), "the watcher did not stop"


def sources(index) -> dict[str, str]:
    """Indexed file name -> content hash."""
    return {Path(e.source).name: e.content_hash for e in index.library() if e.status == "indexed"}


def test_create_replace_and_remove_are_followed(index, tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "old.md").write_text("# Old\n\nThe old notes mention a lighthouse keeper.\n")
    with watching(index, folder) as running:
        running.until(lambda: folder / "old.md" in running.of("indexed"), "the file there at start")
        note = folder / "sub" / "minutes.md"
        note.parent.mkdir()
        note.write_text("# Minutes\n\nThe budget for the harbour crane was approved.\n")
        running.until(lambda: note in running.of("indexed"), "a created file")
        note.write_text("# Minutes\n\nThe harbour crane budget was rejected after a vote.\n")
        running.until(lambda: running.of("indexed").count(note) == 2, "a replaced file")
        (folder / "old.md").unlink()
        running.until(lambda: folder / "old.md" in running.of("removed"), "a removed file")
        (folder / ".hidden.md").write_text("# Hidden\n")
        (folder / "clip.mp4.part").write_bytes(b"not yet")
        time.sleep(1.5)  # longer than settling: neither is ever ingested
    assert {e.path.name for e in running.events} == {"old.md", "minutes.md"}
    assert set(sources(index)) == {"minutes.md"}
    hits = index.search("was the crane budget approved or rejected", top_k=1)
    assert "rejected" in hits[0].text


def test_a_growing_recording_is_ingested_once_after_it_stops_growing(index, tmp_path):
    folder = tmp_path / "recordings"
    folder.mkdir()
    data = TEAM_SYNC.read_bytes()
    growing = folder / "team_sync.mp3"
    with watching(index, folder) as running, growing.open("wb") as out:
        pieces = 8
        for i in range(pieces):  # written over ~2.4 s, longer than settling
            out.write(data[i * len(data) // pieces : (i + 1) * len(data) // pieces])
            out.flush()
            time.sleep(0.3)
        out.close()
        written = time.monotonic()
        running.until(lambda: growing in running.of("indexed") + running.of("failed"), "the file")
        assert time.monotonic() - written < 30
    assert running.of("indexed") == [growing] and not running.of("failed")
    entry = next(e for e in index.library() if e.source == str(growing))
    assert entry.duration == pytest.approx(40.0, abs=0.5)  # the whole file, not a part
    hits = index.search("security checklist before Friday", top_k=1)
    assert hits and hits[0].source == str(growing) and hits[0].start >= 25.0


def test_a_burst_of_files_is_indexed_each_once(index, tmp_path):
    folder = tmp_path / "burst"
    folder.mkdir()
    count = 100
    with watching(index, folder) as running:
        for n in range(count):
            (folder / f"note_{n:03d}.md").write_text(
                f"# Note {n}\n\nItem number {n} of the burst.\n"
            )
        running.until(lambda: len(running.of("indexed")) >= count, "every file of the burst")
        time.sleep(1.0)  # a late duplicate would show now
    ingested = Counter(running.of("indexed"))
    assert len(ingested) == count and set(ingested.values()) == {1}
    assert len(sources(index)) == count


def test_each_file_of_a_run_is_reported_as_soon_as_it_is_done(index, tmp_path):
    folder = tmp_path / "waiting"
    folder.mkdir()
    names = ["a.md", "b.md", "c.md"]
    for name in names:  # there before the watcher: its first look ingests them in one run
        (folder / name).write_text(f"# {name}\n\nThe notes kept in {name}.\n")
    indexed_by_then: list[set[str]] = []
    with watching(
        index, folder, seen=lambda _: indexed_by_then.append(set(sources(index)))
    ) as running:
        running.until(lambda: len(running.of("indexed")) == len(names), "every file")
    assert [path.name for path in running.of("indexed")] == names
    assert indexed_by_then == [set(names[:1]), set(names[:2]), set(names)]


def test_polling_finds_files_without_events(index, tmp_path):
    folder = tmp_path / "mount"
    folder.mkdir()
    with watching(index, folder, poll=0.3) as running:
        note = folder / "polled.md"
        note.write_text("# Polled\n\nFound by scanning the folder.\n")
        running.until(lambda: note in running.of("indexed"), "a file by polling")
        note.unlink()
        running.until(lambda: note in running.of("removed"), "a removal by polling")


def test_the_loop_ends_by_itself_and_bad_folders_are_refused(index, tmp_path):
    watcher = FolderWatcher(index, [tmp_path], settle=0.1)
    started = time.monotonic()
    watcher.run(threading.Event(), max_seconds=1.0)
    assert time.monotonic() - started < 10
    with pytest.raises(VideoIndexError, match="no_such: not a folder"):
        FolderWatcher(index, [tmp_path / "no_such"])
    with pytest.raises(ValueError, match="settle"):
        FolderWatcher(index, [tmp_path], settle=-1)


def test_the_command_prints_a_line_per_file_and_stops_on_sigterm(tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    command = [sys.executable, "-m", "llama_index_video.cli.main", "watch", str(folder)]
    command += ["--index", str(tmp_path / "index"), "--settle", "0.5"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in child.stdout], daemon=True).start()
    try:
        assert lines.get(timeout=WAIT_SECONDS).startswith("watching ")
        (folder / "agenda.md").write_text("# Agenda\n\nReview the quarterly roadmap.\n")
        line = lines.get(timeout=WAIT_SECONDS)
        assert line.startswith("indexed ") and line.endswith("agenda.md (1 moment)\n")
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=WAIT_SECONDS) == 0
    finally:
        child.kill()
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert rest[-1] == "stopped\n"


def test_a_busy_index_leaves_files_waiting_until_the_other_writer_is_done(index, tmp_path):
    from llama_index_video.store.lock import WriterLock

    folder = tmp_path / "drop"
    folder.mkdir()
    note = folder / "late.md"
    with WriterLock(index.path) as lock:
        lock.acquire(wait=0)
        with watching(index, folder, wait=0.0) as running:
            note.write_text("# Late\n\nWritten while another process held the index.\n")
            running.until(lambda: note in running.of("waiting"), "a file waiting for the lock")
            assert note not in running.of("indexed")
            lock.release()
            running.until(lambda: note in running.of("indexed"), "the file once the lock is free")
    assert running.of("indexed") == [note]


def test_a_file_renamed_over_another_replaces_it(index, tmp_path):
    folder = tmp_path / "drop"
    folder.mkdir()
    target = folder / "notes.md"
    target.write_text("# Notes\n\nThe picnic is at the old mill.\n")
    with watching(index, folder) as running:
        running.until(lambda: target in running.of("indexed"), "the first version")
        partial = folder / "notes.md.part"  # written aside, then renamed over (atomic save)
        partial.write_text("# Notes\n\nThe picnic moved to the botanical garden.\n")
        partial.rename(target)
        running.until(lambda: running.of("indexed").count(target) == 2, "the renamed version")
    assert [e.path.name for e in running.events] == ["notes.md", "notes.md"]
    assert "botanical" in index.search("where is the picnic", top_k=1)[0].text


def test_an_index_inside_the_watched_folder_is_left_alone(index, tmp_path):
    assert index.path.parent == tmp_path  # the fixture's index is in the watched folder
    (index.path / "media" / "downloads").mkdir(parents=True, exist_ok=True)
    (index.path / "media" / "downloads" / "talk.md").write_text("# Downloaded\n")
    note = tmp_path / "agenda.md"
    with watching(index, tmp_path) as running:
        note.write_text("# Agenda\n\nThe roof repair is first on the list.\n")
        running.until(lambda: note in running.of("indexed"), "the note")
        time.sleep(2.0)  # the ingest's own writes in the index folder must not start another
    assert [(e.action, e.path) for e in running.events] == [("indexed", note)]


def test_without_watchfiles_the_extra_is_named_before_anything_is_written(
    index, tmp_path, monkeypatch
):
    from llama_index_video.errors import MissingDependencyError

    (tmp_path / "drop").mkdir()
    (tmp_path / "drop" / "note.md").write_text("# Note\n")
    monkeypatch.setitem(sys.modules, "watchfiles", None)
    watcher = FolderWatcher(index, [tmp_path / "drop"])
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[watch\]"):
        watcher.run(threading.Event(), max_seconds=5)
    assert not index.library()


def test_a_file_indexed_with_a_note_is_reported_with_its_moments_too(
    tmp_path, embed_model, timeline
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from tests.conftest import ScriptTranscriber

    folder = tmp_path / "drop"
    folder.mkdir()
    shutil.copyfile(TEAM_SYNC, folder / "call.mp4")  # sound only, named as a video
    hears = ScriptTranscriber({"call.mp4": timeline[TEAM_SYNC.name]})
    index = VideoIndex(
        tmp_path / "index",
        embed_model=embed_model,
        reader=VideoReader(media_dir=tmp_path / "index" / "media", frames=None, transcriber=hears),
    )
    try:
        with watching(index, folder) as running:
            running.until(lambda: running.of("indexed"), "the file")
        [event] = running.events
        [entry] = index.library()
    finally:
        index.close()

    assert event.detail.endswith(" moments; no video stream: transcript only"), event.detail
    assert int(event.detail.split()[0]) == sum(entry.moments.values()) > 0
