"""When a growing file has ended (``live._Growth``), on a clock the test moves."""

from __future__ import annotations

import threading

import pytest

from llama_index_video import live

BLOCK = 256 * 1024  # ffmpeg's write buffer: a recorder's file grows by these


@pytest.fixture
def clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: now[0])
    return now


def _ended(growth: live._Growth) -> bool:
    return growth.ended(deadline=float("inf"), stop=threading.Event())


def test_blocks_slower_than_two_minutes_do_not_end_the_recording(tmp_path, clock):
    # A phone bridge's MP3 at 16 kbit/s written by ffmpeg: one 256 KiB block every 131 s.
    recording = tmp_path / "bridge call.mp3"
    recording.write_bytes(b"")
    growth = live._Growth(recording, settle=10.0, max_bytes=None)
    assert not _ended(growth)
    clock[0] = 131.0
    recording.write_bytes(bytes(BLOCK))
    assert not _ended(growth)
    clock[0] = 131.0 + 125.0  # the next block is 6 s away
    assert not _ended(growth)
    clock[0] = 131.0 + 1.5 * 131.0
    assert _ended(growth)
