"""When a growing file has ended (``live._Growth``), on a clock the test moves."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_live import open_index

from llama_index_video import live
from llama_index_video.errors import MediaError

BLOCK = 256 * 1024  # ffmpeg's write buffer: a recorder's file grows by these


@pytest.fixture
def clock(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: now[0])
    return now


def _ended(growth: live._Growth) -> bool:
    return growth.ended(deadline=float("inf"), stop=threading.Event())


def _followed(tmp_path: Path, blocks: int) -> tuple[Path, live._Growth]:
    """A recording of ``blocks`` whole blocks, and its growth seen from now."""
    recording = tmp_path / "bridge call.mp3"
    recording.write_bytes(bytes(blocks * BLOCK))
    growth = live._Growth(recording, settle=10.0, max_bytes=None)
    assert not _ended(growth)
    return recording, growth


def _grows(recording: Path, growth: live._Growth, blocks: int) -> None:
    recording.write_bytes(bytes(blocks * BLOCK))
    assert not _ended(growth)


def test_blocks_slower_than_two_minutes_do_not_end_the_recording(tmp_path, clock):
    # A phone bridge's MP3 at 16 kbit/s written by ffmpeg: one 256 KiB block every 131 s.
    recording, growth = _followed(tmp_path, 0)
    clock[0] = 131.0
    _grows(recording, growth, 1)
    clock[0] = 131.0 + 125.0  # the next block is 6 s away
    assert not _ended(growth)
    clock[0] = 262.0
    _grows(recording, growth, 2)
    clock[0] = 262.0 + 125.0
    assert not _ended(growth)
    clock[0] = 262.0 + 1.5 * 131.0
    assert _ended(growth)


def test_an_empty_file_waits_for_the_first_block_of_an_8_kbit_recorder(tmp_path, clock):
    # ffmpeg started with the follower writes its first 256 KiB of 8 kbit/s MP3 at 262 s.
    _, growth = _followed(tmp_path, 0)
    clock[0] = 261.0
    assert not _ended(growth)
    clock[0] = live.UNKNOWN_PACE_SECONDS
    assert _ended(growth)


def test_a_follower_started_between_two_blocks_waits_for_the_next(tmp_path, clock):
    # Started 100 s into a 16 kbit/s recording: its second block comes 31 s later, the
    # third 131 s after that; 31 s is not the recorder's pace.
    recording, growth = _followed(tmp_path, 1)
    clock[0] = 31.0
    _grows(recording, growth, 2)
    clock[0] = 31.0 + 130.0
    assert not _ended(growth)
    _grows(recording, growth, 3)
    clock[0] = 31.0 + 130.0 + 1.5 * 130.0
    assert _ended(growth)


def test_a_file_nobody_writes_is_refused_in_one_line_once_the_wait_is_over(
    tmp_path, clock, monkeypatch, embed_model
):
    def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(live.time, "sleep", sleep)
    recording = tmp_path / "bridge call.mp3"
    recording.write_bytes(b"")
    index = open_index(tmp_path / "index", embed_model)
    with pytest.raises(MediaError) as refused:
        live.ingest_live(index, recording, settle=10.0)
    assert "still empty after 524 s: a recorder writes" in str(refused.value)
    assert clock[0] == pytest.approx(live.UNKNOWN_PACE_SECONDS, abs=1.0)
    assert "\n" not in str(refused.value)
    clock[0] = 0.0
    # --max-hours ends it first
    with pytest.raises(MediaError, match="still empty after 60 s: the time it may follow"):
        live.ingest_live(index, recording, settle=10.0, max_seconds=60.0)
    index.close()
