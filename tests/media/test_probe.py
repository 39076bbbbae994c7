from __future__ import annotations

import pytest

from llama_index_video.errors import MediaError, UnsupportedMediaError
from llama_index_video.media.probe import probe
from tests_support import CHECKOUT, OZONE, TEAM_SYNC


def test_probe_reports_streams_of_a_video():
    info = probe(OZONE)
    assert info.duration == pytest.approx(80.0, abs=0.1)
    assert info.has_video and info.has_audio
    assert info.video_codec == "h264"
    assert (info.width, info.height) == (640, 360)
    assert info.frame_rate == pytest.approx(15.0)
    assert info.audio_codec == "aac"


def test_probe_reports_audio_only_file():
    info = probe(TEAM_SYNC)
    assert info.has_audio and not info.has_video
    assert info.duration == pytest.approx(40.0, abs=0.2)


def test_probe_durations_differ_per_file():
    assert probe(CHECKOUT).duration == pytest.approx(60.0, abs=0.1)


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "empty file"), (b"this is a text file, not a video\n" * 20, "not a readable")],
)
def test_probe_rejects_non_media_with_one_line(tmp_path, content, reason):
    path = tmp_path / "clip.mp4"
    path.write_bytes(content)
    with pytest.raises(UnsupportedMediaError) as caught:
        probe(path)
    message = str(caught.value)
    assert str(path) in message and reason in message
    assert "\n" not in message


def test_probe_missing_file(tmp_path):
    with pytest.raises(MediaError, match="file not found"):
        probe(tmp_path / "nope.mp4")
