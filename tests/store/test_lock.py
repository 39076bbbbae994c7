"""One writer at a time, across real processes; "interrupted" means the holder is gone."""

from __future__ import annotations

import logging
import os
import signal
import time

import pytest

from llama_index_video.errors import IndexBusyError
from llama_index_video.index import VideoIndex
from llama_index_video.store.lock import WriterLock, read_generation
from llama_index_video.store.manifest import Manifest

HOLD_LOCK = """
import sys
from pathlib import Path
from llama_index_video.store.lock import WriterLock, read_generation
lock = WriterLock(Path(sys.argv[1]))
lock.acquire(wait=0)
print("locked", flush=True)
sys.stdin.readline()
"""


def _holder(spawn, folder):
    process = spawn(code=HOLD_LOCK.replace("sys.argv[1]", repr(str(folder))))
    assert process.stdout.readline().strip() == "locked", process.stderr.read()
    return process


def _wait_until(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_second_writer_waits_for_the_first_and_nothing_is_lost(
    spawn, text_folder, tmp_path, embed_model, caplog
):
    index_dir = tmp_path / "index"
    big = tmp_path / "big" / "manual.md"
    big.parent.mkdir()
    big.write_text(
        "\n\n".join(
            f"## Chapter {n}\n\nStep {n} of the runbook: check gauge {n} and log its reading."
            for n in range(150)
        )
    )
    index = VideoIndex(index_dir, embed_model=embed_model)
    first = spawn("ingest", str(big), "--index", str(index_dir), "--quiet")
    _wait_until(lambda: WriterLock(index_dir).holder() or first.poll() is not None)
    assert first.poll() is None, first.communicate()
    with caplog.at_level(logging.WARNING, logger="llama_index_video.store.lock"):
        report = index.ingest([text_folder], wait=120)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert f"pid {first.pid}" in caplog.text and "waiting" in caplog.text
    assert report.ok and len(report.of("indexed")) == 2
    check, _ = index.verify()
    index.close()
    assert check.ok, check
    assert len(check.sources) == 3
    assert all(s.found == s.expected > 0 for s in check.sources)


def test_no_wait_fails_at_once_naming_the_holder(spawn, run, index_copy, text_folder):
    holder = _holder(spawn, index_copy)
    started = time.monotonic()
    code, _, err = run("ingest", text_folder, "--index", index_copy, "--no-wait", "--quiet")
    assert code == 2 and time.monotonic() - started < 60
    assert err.count("\n") == 1 and f"pid {holder.pid} on " in err
    assert "is writing to this index" in err and "Traceback" not in err


def test_interrupted_means_the_holder_is_gone(spawn, index_copy, text_folder, embed_model):
    manifest = Manifest(index_copy / "manifest.sqlite")
    victim = manifest.files("indexed")[0]
    manifest.set_file(victim.content_hash, "indexing")  # a live writer's work in progress
    manifest.close()
    holder = _holder(spawn, index_copy)
    index = VideoIndex(index_copy, embed_model=embed_model)
    with pytest.raises(IndexBusyError, match=f"pid {holder.pid}"):
        index.ingest([text_folder], wait=0.5)
    assert index.manifest.file(victim.content_hash).status == "indexing"  # left alone

    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    report = index.ingest([text_folder], wait=0)
    outcomes = {f.content_hash: f.outcome for f in report.files}
    assert outcomes[victim.content_hash] == "indexed"  # cleaned up and indexed again
    assert index.verify()[0].ok
    index.close()


TAKE_AND_GIVE_UP = """
import sys
from pathlib import Path
from llama_index_video.store.lock import WriterLock, read_generation
lock = WriterLock(Path(sys.argv[1]))
lock.acquire(wait=5)
print("holding", flush=True)
sys.stdin.readline()
lock.release()
for _ in range(2000):
    lock = WriterLock(Path(sys.argv[1]))
    lock.acquire(wait=5)
    lock.release()
"""


def test_a_reader_never_takes_a_writer_at_work_for_a_finished_generation(spawn, tmp_path):
    """The record used to be emptied and then written: a reader in between read an
    empty file, generation 0 and finished, while a writer held the lock (``serve``
    then copied a version that was not one, or waited and served the old one).

    The reader starts once the writer holds the lock: it read for a fixed count from
    the writer's start, and on a busy machine the count ran out before the writer
    process had even imported the package (only generation 1 read, so "did not overlap")."""
    first = WriterLock(tmp_path)
    first.acquire(wait=0)
    first.release()
    writer = spawn(code=TAKE_AND_GIVE_UP.replace("sys.argv[1]", repr(str(tmp_path))))
    assert writer.stdout.readline().strip() == "holding", writer.communicate()
    read: list[int | None] = [read_generation(tmp_path)]
    writer.stdin.write("go\n")
    writer.stdin.flush()
    for _ in range(5_000_000):  # ends by count, or when the writer's 2,000 turns are done
        if writer.poll() is not None:
            break
        read.append(read_generation(tmp_path))
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    read.append(read_generation(tmp_path))
    assert read[0] is None and read[-1] == first.generation + 2001  # held; every turn counted
    finished = [generation for generation in read if generation is not None]
    assert min(finished) >= first.generation
    assert finished == sorted(finished)


def test_a_writer_killed_while_releasing_leaves_the_count_going_on(tmp_path):
    """A release writes its short record over the holder's long one, then cuts the file
    to its length; a writer killed between the two leaves the release record followed by
    the end of the holder's. That file read as no record at all: the next writer counted
    from 1 again, so a process that had loaded the vectors at generation 1 long before
    took them for current (and wrote from them). Written here as the kill leaves it."""
    for _ in range(3):
        with WriterLock(tmp_path) as lock:
            lock.acquire(wait=0)
    third = lock.generation
    with WriterLock(tmp_path) as lock:
        lock.acquire(wait=0)
        holder = (tmp_path / "write.lock").read_bytes()
    released = (tmp_path / "write.lock").read_bytes()
    assert b"pid" in holder and len(released) < len(holder) and b"pid" not in released
    (tmp_path / "write.lock").write_bytes(released + holder[len(released) :])

    fourth = third + 1
    assert read_generation(tmp_path) == fourth
    after = WriterLock(tmp_path)
    after.acquire(wait=0)
    try:
        assert (after.generation_before, after.generation, after.previous_holder) == (
            fourth,
            fourth + 1,
            "",
        )
        assert read_generation(tmp_path) is None  # held
    finally:
        after.release()
    assert read_generation(tmp_path) == fourth + 1


def test_a_writer_of_this_process_is_named_as_another_thread(index_copy, embed_model, monkeypatch):
    """Two locks of one process exclude each other as two processes' do; the one left
    waiting was told that "another process" (or "pid N on this host") was writing."""
    import threading

    from llama_index_video.errors import IndexCorruptError

    folder = index_copy
    held, done = threading.Event(), threading.Event()

    def writer() -> None:
        with WriterLock(folder) as lock:
            lock.acquire(wait=0)
            held.set()
            done.wait(timeout=60)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert held.wait(timeout=60)
        with pytest.raises(IndexBusyError) as busy, WriterLock(folder) as lock:
            lock.acquire(wait=0)
        assert f"another thread of this process (pid {os.getpid()}," in str(busy.value)
        assert "another process" not in str(busy.value)

        # read in place, a read can meet the rows a writer adds
        index = VideoIndex(folder, embed_model=embed_model, snapshot_reads=False)

        def met_the_writer() -> None:  # what a read of rows a writer is adding raises
            raise IndexCorruptError(f"{folder}: the store holds fewer rows than listed")

        monkeypatch.setattr(index, "check_store", met_the_writer)
        with pytest.raises(IndexBusyError) as busy:
            index.search("anything")
        assert "another thread of this process" in str(busy.value)
        assert "another process" not in str(busy.value) and "\n" not in str(busy.value)
        index.close()
    finally:
        done.set()
        thread.join(timeout=60)
