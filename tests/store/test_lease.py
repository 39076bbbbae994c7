"""The read-write lease: reads run together, a swap waits for them and holds new ones."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from llama_index_video.store import lease as lease_module
from llama_index_video.store.lease import ReadWriteLease, folder_lease


def _until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_swap_waits_for_reads_in_flight_and_holds_new_ones():
    """Moved from the service's tests, where the second read started 50 ms after the
    swap on a guess that the swap was waiting by then: on a busy machine it was not, the
    second read went in first, and the order asserted failed. Each step now waits for
    the state it needs."""
    lease = ReadWriteLease()
    events: list[str] = []
    first_in, first_may_leave = threading.Event(), threading.Event()

    def first() -> None:
        with lease.shared():
            events.append("first in")
            first_in.set()
            assert first_may_leave.wait(30)
            events.append("first out")

    def swap() -> None:
        with lease.exclusive():
            events.append("swap")

    def second() -> None:
        with lease.shared():
            events.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=swap)]
    threads[0].start()
    assert first_in.wait(30)
    threads[1].start()
    _until(lambda: lease._writers_waiting == 1)
    threads.append(threading.Thread(target=second))
    threads[2].start()  # held back from here on, whenever it asks: the swap waits
    first_may_leave.set()
    for thread in threads:
        thread.join(timeout=30)
    assert events == ["first in", "first out", "swap", "second in"]


def test_a_read_inside_a_read_is_one_read_and_a_swap_inside_one_is_refused():
    """A search inside a search (a tool that searches while answering) must not wait
    for a swap that waits for the outer search; a swap inside a read would wait for
    itself, so it is refused at once."""
    lease = ReadWriteLease()
    swapped = threading.Event()

    def swap() -> None:
        with lease.exclusive():
            swapped.set()

    with lease.shared():
        other = threading.Thread(target=swap)
        other.start()
        _until(lambda: lease._writers_waiting == 1)
        with lease.shared():  # would wait for the swap, which waits for this read
            assert lease.reading_here()
        with pytest.raises(RuntimeError, match="inside a read"), lease.exclusive():
            pass
        assert not swapped.is_set()
    other.join(timeout=30)
    assert swapped.is_set() and not lease.reading_here()


def test_one_lease_per_folder(tmp_path):
    assert folder_lease(tmp_path / "a") is folder_lease(tmp_path / "a")
    assert folder_lease(tmp_path / "a") is not folder_lease(tmp_path / "b")


def test_a_lease_nobody_holds_is_let_go(tmp_path):
    """``serve`` reads a new private copy at each version: their leases do not pile up."""
    lease = folder_lease(tmp_path / "copy")
    with lease.shared():
        assert folder_lease(tmp_path / "copy") is lease
    del lease
    assert (tmp_path / "copy").absolute() not in lease_module._FOLDERS


def test_a_commit_step_waits_for_the_reads_in_progress_and_new_reads_wait_for_it(
    tmp_path, monkeypatch
):
    """What a writer replaced is deleted in its commit step (``WriterLock.committing``):
    it waits for the reads of the folder in progress (they hold ``read.lock`` shared
    through their lease), and a read arriving meanwhile waits until the writer has
    finished its version. ``read.lock`` is ``flock``ed, so the two sides would exclude
    each other across processes as they do here across threads."""
    from llama_index_video.store.lock import WriterLock, committing, read_generation

    lease = folder_lease(tmp_path)
    writer = WriterLock(tmp_path)
    writer.acquire(wait=0)
    committed, seen = threading.Event(), []

    def commit() -> None:
        writer.committing()
        committed.set()

    step = threading.Thread(target=commit)
    with lease.shared():
        step.start()
        _until(lambda: committing(tmp_path))
        assert not committed.is_set()  # the read in progress holds it back
    step.join(timeout=60)
    assert committed.is_set()

    def read() -> None:
        with lease.shared():
            seen.append(read_generation(tmp_path))

    opened = threading.Event()
    readers_file = lease_module.readers_file
    monkeypatch.setattr(
        lease_module, "readers_file", lambda folder: (opened.set(), readers_file(folder))[1]
    )
    reader = threading.Thread(target=read)
    reader.start()
    assert opened.wait(30)
    assert seen == []  # waiting for the commit step (a read now would see no generation)
    writer.release()
    reader.join(timeout=60)
    assert seen == [writer.generation] and not committing(tmp_path)


def test_a_read_that_finds_a_commit_step_announced_waits_for_it_at_most_so_long(tmp_path):
    from llama_index_video.errors import IndexBusyError
    from llama_index_video.store import lock as lock_module

    writer = lock_module.WriterLock(tmp_path)
    writer.acquire(wait=0)
    writer.committing()
    with pytest.raises(IndexBusyError, match="still finishing its write") as raised:
        lock_module.wait_for_commit(tmp_path, wait=0.2)
    assert "\n" not in str(raised.value)
    writer.release()
    lock_module.wait_for_commit(tmp_path)  # nothing to wait for


def test_a_writer_killed_in_its_commit_step_holds_no_read_back(tmp_path):
    """A writer process killed with SIGKILL after announcing its commit step leaves the
    announcement in ``write.lock``, but no lock: reads go on at once, not after
    waiting :data:`COMMIT_WAIT_SECONDS` to fail with ``IndexBusyError``."""
    from llama_index_video.store.lock import committing, wait_for_commit

    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from llama_index_video.store.lock import WriterLock\n"
        "writer = WriterLock(Path(sys.argv[1]))\n"
        "writer.acquire(wait=0)\n"
        "writer.committing()\n"
        "print('committing', flush=True)\n"
        "time.sleep(600)\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "committing"
        assert committing(tmp_path)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    assert '"committing": true' in (tmp_path / "write.lock").read_text()
    assert not committing(tmp_path)
    wait_for_commit(tmp_path, wait=0.2)  # raised IndexBusyError before
