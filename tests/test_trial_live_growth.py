"""A fragmented MP4 followed while ffmpeg writes it (a new user's trial): its 256 KiB
blocks come after a 28-byte ``ftyp`` box, on a clock the test moves."""

from __future__ import annotations

import pytest
from test_live_growth import BLOCK, _ended, clock  # noqa: F401  (clock: the fixture)

from llama_index_video import live

FTYP = (28).to_bytes(4, "big") + b"ftypisom" + bytes(16)
"""The box ffmpeg writes at once into a fragmented MP4 (``-movflags +empty_moov``)."""


@pytest.mark.parametrize("blocks_seen", [0, 3], ids=["with the recorder", "resumed"])
def test_a_fragmented_mp4s_blocks_after_its_ftyp_do_not_end_the_recording(
    tmp_path,
    clock,  # noqa: F811
    blocks_seen,
):
    # AAC at 32 kbit/s: a block every 65 s. Followed from the recorder's start, or
    # resumed after a Ctrl-C between two blocks, it was taken for ended 10 s after a
    # block (--live-settle), and its last minutes were never read.
    recording = tmp_path / "meeting live.mp4"
    recording.write_bytes(FTYP + bytes(blocks_seen * BLOCK))
    growth = live._Growth(recording, settle=10.0, max_bytes=None)
    assert not _ended(growth)
    clock[0] = 64.0
    assert not _ended(growth)
    for block in (1, 2):
        clock[0] = 65.0 * block
        recording.write_bytes(FTYP + bytes((blocks_seen + block) * BLOCK))
        assert not _ended(growth)
        clock[0] = 65.0 * block + 64.0
        assert not _ended(growth)
    recording.write_bytes(FTYP + bytes((blocks_seen + 2) * BLOCK + 5_000))  # the last write
    assert not _ended(growth)
    clock[0] += 10.0
    assert _ended(growth)
