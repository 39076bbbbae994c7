"""Bad input: a clear one-line error naming the file, or a correct result; never a traceback."""

from __future__ import annotations

import json
import logging
import time
from fractions import Fraction

import av
import numpy as np
import pytest

from llama_index_video import schema
from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.reader.speech import NO_SPEECH
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.schema import format_timestamp
from tests_support import HANDBOOK, LIBRIVOX, OZONE

LIBRIVOX_SECONDS = 24.73


@pytest.fixture(scope="module")
def reader(tmp_path_factory, transcriber):
    return VideoReader(media_dir=tmp_path_factory.mktemp("media"), transcriber=transcriber)


def _one_line_error(reader, path, *fragments):
    with pytest.raises(MediaError) as caught:
        reader.read(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    for fragment in fragments:
        assert fragment in message
    return message


def test_zero_byte_file(reader, tmp_path):
    path = tmp_path / "empty.mp4"
    path.touch()
    _one_line_error(reader, path, "empty file")


def test_truncated_mp4(reader, tmp_path):
    path = tmp_path / "truncated.mp4"
    path.write_bytes(OZONE.read_bytes()[: OZONE.stat().st_size * 2 // 5])
    _one_line_error(reader, path, "no 'moov' box", "cut off")


def test_a_recording_cut_short_says_where_it_ends_and_keeps_what_it_holds(reader, tmp_path):
    """A copy stopped halfway: the FLAC header still declares the whole 24.7 s reading."""
    path = tmp_path / "reading.flac"
    path.write_bytes(LIBRIVOX.read_bytes()[: LIBRIVOX.stat().st_size // 2])
    result = reader.read(path)
    assert 0.3 * LIBRIVOX_SECONDS < result.duration < 0.7 * LIBRIVOX_SECONDS
    ends = format_timestamp(result.duration)
    assert f"cut short: it ends at {ends} of the 00:24 its header declares" in result.notes
    said = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"][1]["start"]
    assert any(
        node.metadata[schema.START_S] - 1.0 <= said <= node.metadata[schema.END_S]
        for node in result.nodes
    )


def test_text_file_renamed_to_mp4(reader, tmp_path):
    path = tmp_path / "notes.mp4"
    path.write_text("# Meeting notes\nNothing to see here.\n" * 50)
    message = _one_line_error(reader, path, "not a readable audio or video file: it holds text")
    assert "invalid data" not in message


def test_unsupported_type_and_missing_file(reader, tmp_path):
    odd = tmp_path / "slides.pptx"
    odd.write_bytes(b"PK\x03\x04")
    _one_line_error(reader, odd, "unsupported file type '.pptx'")
    _one_line_error(reader, tmp_path / "gone.mp4", "file not found")


def test_video_without_audio_gives_frames_with_a_note(reader, tmp_path, make_video):
    path = make_video(tmp_path / "mute.mp4", [(3.0, (200, 0, 0)), (3.0, (0, 0, 200))], tone=False)
    result = reader.read(path)
    assert [n.metadata[schema.MODALITY] for n in result.nodes] == ["frame", "frame"]
    assert "no audio track: frames only" in result.notes
    assert result.nodes[0].metadata[schema.NOTE] == "no audio track: frames only"


def test_audio_without_speech_is_read_as_a_silent_recording(reader, tmp_path, make_wav):
    rng = np.random.default_rng(7)
    silence = make_wav(tmp_path / "silence.wav", np.zeros(16000 * 5, np.float32))
    noise = make_wav(tmp_path / "noise.wav", rng.normal(0, 0.05, 16000 * 5).astype(np.float32))
    for path in (silence, noise):
        result = reader.read(path)
        assert result.nodes == [] and result.notes == (NO_SPEECH,)
        assert result.duration == pytest.approx(5.0, abs=0.1)


def test_a_video_with_no_speech_and_frames_off_fails_saying_so(tmp_path, transcriber, make_video):
    blind = VideoReader(media_dir=tmp_path / "media", transcriber=transcriber, frames=None)
    path = make_video(tmp_path / "tone.mp4", [(4.0, (0, 120, 0))], tone=True)
    _one_line_error(blind, path, f"{NO_SPEECH}; frames are off")


def test_video_without_speech_still_gives_frames(reader, tmp_path, make_video):
    path = make_video(tmp_path / "tone.mp4", [(4.0, (0, 120, 0))], tone=True)
    result = reader.read(path)
    assert [n.metadata[schema.MODALITY] for n in result.nodes] == ["frame"]
    assert NO_SPEECH in result.notes


def _sparse_ten_hour_video(path):
    """Two frames, ten hours apart: a real 10-hour file without 10 hours of pixels."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=1)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1)
        for pts, colour in ((0, 30), (36_000, 220)):
            frame = av.VideoFrame.from_ndarray(
                np.full((64, 64, 3), colour, np.uint8), format="rgb24"
            )
            frame.pts = pts
            frame.time_base = Fraction(1, 1)
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path


def test_ten_hour_file_is_read_quickly_or_refused_clearly(reader, tmp_path):
    path = _sparse_ten_hour_video(tmp_path / "all hands (10h).mp4")
    started = time.monotonic()
    result = reader.read(path)
    assert time.monotonic() - started < 30
    assert result.duration == pytest.approx(36_000, abs=2)
    times = [n.metadata[schema.FRAME_TIME] for n in result.nodes]
    assert times[0] == 0.0 and times[-1] == pytest.approx(36_000, abs=1)
    limited = VideoReader(
        media_dir=tmp_path / "m", transcriber=reader.transcriber, max_duration=3600
    )
    _one_line_error(limited, path, "is 10:00:0", "long, over the limit of 1:00:00")


def test_one_bad_file_never_stops_the_others(reader, tmp_path, caplog):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"\x00" * 1000)
    with caplog.at_level(logging.WARNING):
        nodes = reader.load_data([bad, HANDBOOK])
    assert nodes and {n.metadata[schema.SOURCE] for n in nodes} == {str(HANDBOOK)}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(bad) in w for w in warnings)


def test_raise_on_error_raises_the_package_error(tmp_path, transcriber):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"\x00" * 1000)
    strict = VideoReader(media_dir=tmp_path, transcriber=transcriber, raise_on_error=True)
    with pytest.raises(VideoIndexError):
        strict.load_data([bad])


def test_file_names_with_spaces_quotes_and_unicode(reader, tmp_path):
    path = tmp_path / "Ünïcode 'quoted' \"talk\" 東京.mp4"
    path.write_bytes(OZONE.read_bytes())
    nodes = reader.load_data(path)
    assert nodes and nodes[0].metadata[schema.SOURCE] == str(path)
