"""A fragmented MP4 followed while ffmpeg writes it (a new user's trial): its 256 KiB
blocks come after a 28-byte header, on a clock the test moves."""

from __future__ import annotations

from test_live_growth import BLOCK, _ended, clock  # noqa: F401  (clock: the fixture)

from llama_index_video import live

HEADER = 28  # the ftyp box ffmpeg writes at once into a fragmented MP4


def test_a_fragmented_mp4s_blocks_after_its_header_do_not_end_the_recording(tmp_path, clock):  # noqa: F811
    # AAC at 32 kbit/s: ffmpeg's first block at 65 s, then one every 65 s; the follower
    # started with the recorder took it for ended 10 s after each (--live-settle).
    recording = tmp_path / "meeting live.mp4"
    recording.write_bytes(bytes(HEADER))
    growth = live._Growth(recording, settle=10.0, max_bytes=None)
    assert not _ended(growth)
    clock[0] = 64.0
    assert not _ended(growth)
    for block in (1, 2):
        clock[0] = 65.0 * block
        recording.write_bytes(bytes(HEADER + block * BLOCK))
        assert not _ended(growth)
        clock[0] = 65.0 * block + 64.0
        assert not _ended(growth)
    recording.write_bytes(bytes(HEADER + 2 * BLOCK + 5_000))  # the recorder's last write
    assert not _ended(growth)
    clock[0] += 10.0
    assert _ended(growth)
