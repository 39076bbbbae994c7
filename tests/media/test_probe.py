from __future__ import annotations

import subprocess

import numpy as np
import pytest

from llama_index_video.errors import MediaError, UnsupportedMediaError
from llama_index_video.media.probe import probe
from tests_support import CHECKOUT, LIBRIVOX, OZONE, TEAM_SYNC


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
    [
        (b"", "empty file"),
        (b"this is a text file, not a video\n" * 20, "audio or video file: it holds text"),
        ("Protokoll: Gr\u00fc\u00dfe aus \u6771\u4eac\n".encode() * 300, "it holds text"),
        (b"\x00\x01garbage" * 64, "not a readable audio or video file (invalid data"),
    ],
)
def test_probe_rejects_non_media_with_one_line(tmp_path, content, reason):
    path = tmp_path / "clip.mp4"
    path.write_bytes(content)
    with pytest.raises(UnsupportedMediaError) as caught:
        probe(path)
    message = str(caught.value)
    assert str(path) in message and reason in message
    assert "\n" not in message


def test_random_bytes_taken_for_an_mp3_are_not_media_not_a_truncated_file(tmp_path):
    """FFmpeg reads these bytes as an MP3 of no length; they used to be reported as
    "has no duration (truncated or still being written?)" (a new user's trial)."""
    path = tmp_path / "corrupt.mp3"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 100_000, np.uint8).tobytes())
    with pytest.raises(UnsupportedMediaError) as caught:
        probe(path)
    assert str(caught.value) == (
        f"{path}: not a readable audio or video file (none of its first 50 packets decodes)"
    )


def test_probe_missing_file(tmp_path):
    with pytest.raises(MediaError, match="file not found"):
        probe(tmp_path / "nope.mp4")


def mp4_with_last_frame_lasting(path, last_duration: int, *, patched_ticks: int | None = None):
    """A 10 s MP4 (10 fps video, silent AAC) written with PyAV whose last video packet
    lasts ``last_duration`` tenths of a second; ``patched_ticks`` then overwrites that
    sample's duration in the video track's ``stts`` table (its last entry)."""
    import struct
    from fractions import Fraction

    import av
    import numpy as np

    with av.open(str(path), "w") as out:
        video = out.add_stream("libx264", rate=10)
        video.width, video.height, video.pix_fmt = 160, 120, "yuv420p"
        audio = out.add_stream("aac", rate=16000)
        audio.layout = "mono"
        packets = []
        for i in range(100):
            frame = av.VideoFrame.from_ndarray(
                np.full((120, 160, 3), (i * 2) % 255, np.uint8), format="rgb24"
            )
            frame.pts, frame.time_base = i, Fraction(1, 10)
            packets += video.encode(frame)
        packets += video.encode()
        max(packets, key=lambda p: p.pts).duration = last_duration
        for packet in packets:
            out.mux(packet)
        for i in range(10 * 16000 // 1024):
            sound = av.AudioFrame.from_ndarray(
                np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
            )
            sound.sample_rate, sound.pts, sound.time_base = 16000, i * 1024, Fraction(1, 16000)
            out.mux(audio.encode(sound))
        out.mux(audio.encode())
    if patched_ticks is not None:
        data = bytearray(path.read_bytes())
        at = data.index(b"stts")  # the video track's: written first
        (entries,) = struct.unpack(">I", data[at + 8 : at + 12])
        assert entries == 2  # all frames at one length, then the last at its own
        delta = at + 12 + 8 * (entries - 1) + 4
        data[delta : delta + 4] = struct.pack(">I", patched_ticks)
        path.write_bytes(data)
    return path


def test_a_last_sample_lasting_2_to_the_31_ticks_does_not_stretch_the_recording(
    tmp_path, script_transcriber
):
    from llama_index_video import schema
    from llama_index_video.media.frames import FrameSamplingOptions
    from llama_index_video.reader.video_reader import VideoReader

    path = mp4_with_last_frame_lasting(tmp_path / "stretched.mp4", 3, patched_ticks=2**31)
    assert probe(path).duration == pytest.approx(10.2, abs=0.3)
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=script_transcriber,
        frames=FrameSamplingOptions(interval=2.0),
        ocr="off",
    )
    nodes = reader.load_data([path])
    frames = [n for n in nodes if n.metadata[schema.MODALITY] == "frame"]
    assert len(frames) >= 3
    assert max(float(n.metadata[schema.END_S]) for n in nodes) <= 10.5


def test_a_declared_length_the_last_frame_reaches_is_kept(tmp_path):
    """A slide shown for the last 30 s: the declared length, which the packet reaches."""
    path = mp4_with_last_frame_lasting(tmp_path / "held.mp4", 300)  # the last 30 s
    assert probe(path).duration == pytest.approx(39.9, abs=0.3)


def faststart_mp4(path, seconds: int):
    """An MP4 of ``seconds`` (10 fps video, a 440 Hz AAC tone) with its index (``moov``)
    before the media, as web downloads and players' "fast start" write it."""
    from fractions import Fraction

    import av

    with av.open(str(path), "w", options={"movflags": "+faststart"}) as out:
        video = out.add_stream("libx264", rate=10)
        video.width, video.height, video.pix_fmt = 160, 120, "yuv420p"
        audio = out.add_stream("aac", rate=16000)
        audio.layout = "mono"
        for i in range(seconds * 10):
            frame = av.VideoFrame.from_ndarray(
                np.full((120, 160, 3), (i * 7) % 255, np.uint8), format="rgb24"
            )
            frame.pts, frame.time_base = i, Fraction(1, 10)
            out.mux(video.encode(frame))
        out.mux(video.encode())
        tone = np.sin(2 * np.pi * 440 * np.arange(seconds * 16000) / 16000).astype(np.float32)
        for i in range(0, len(tone) - 1024, 1024):
            sound = av.AudioFrame.from_ndarray(
                tone[None, i : i + 1024], format="fltp", layout="mono"
            )
            sound.sample_rate, sound.pts, sound.time_base = 16000, i, Fraction(1, 16000)
            out.mux(audio.encode(sound))
        out.mux(audio.encode())
    return path


def readable_end(path) -> float:
    """Where the last packet that can be read ends, demuxing the file from its start."""
    import av

    with av.open(str(path)) as container:
        ends = [
            float((packet.pts + (packet.duration or 0)) * packet.time_base)
            for packet in container.demux()
            if packet.pts is not None
        ]
    return max(ends)


def test_an_mp4_cut_short_lasts_as_long_as_its_bytes_not_its_index(tmp_path):
    """A download stopped halfway keeps its index at the front, which declares the whole
    length; the half had been listed, cut into clips and chaptered at 24.7 s of 12.3 s
    (a new user's trial)."""
    whole = faststart_mp4(tmp_path / "whole.mp4", 20)
    cut = tmp_path / "cut short.mp4"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    assert probe(whole).duration == pytest.approx(20.0, abs=0.2)
    end = readable_end(cut)
    assert end < 15.0
    assert probe(cut).duration == pytest.approx(end, abs=1.0)


def test_an_mp4_without_its_index_is_said_to_be_cut_off(tmp_path):
    """An MP4 whose recorder stopped before writing its index (``moov``, written last)
    was "not a readable audio or video file (invalid data found when processing input)"."""
    path = tmp_path / "recording.mp4"
    whole = OZONE.read_bytes()
    path.write_bytes(whole[: whole.index(b"moov") - 4])
    with pytest.raises(UnsupportedMediaError) as caught:
        probe(path)
    assert str(caught.value) == (
        f"{path}: an MP4 without its index (no 'moov' box): the recording was cut off "
        "before it was finished, or the download is incomplete"
    )


def _vbr_mp3(path, *, xing):
    """The LibriVox reading after 20 s of silence, as a VBR MP3; without its Xing frame
    (as a recorder writing to a pipe leaves it) FFmpeg guesses its length from the bit
    rate of the silence."""
    subprocess.run(
        [
            *("ffmpeg", "-nostdin", "-loglevel", "error", "-y"),
            *("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono:d=20", "-i", str(LIBRIVOX)),
            *("-filter_complex", "[0][1]concat=n=2:v=0:a=1", "-c:a", "libmp3lame", "-q:a", "6"),
            *("-write_xing", "1" if xing else "0", str(path)),
        ],
        check=True,
        timeout=120,
    )
    return path


def test_a_length_guessed_from_the_bit_rate_is_no_declaration(tmp_path):
    info = probe(_vbr_mp3(tmp_path / "piped.mp3", xing=False))
    assert info.duration == pytest.approx(44.7, abs=0.3)
    assert info.declared_duration is None


def test_an_mp3_cut_short_keeps_the_length_its_xing_frame_declares(tmp_path):
    whole = _vbr_mp3(tmp_path / "whole.mp3", xing=True)
    assert probe(whole).declared_duration is None
    cut = tmp_path / "cut.mp3"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    info = probe(cut)
    assert info.declared_duration == pytest.approx(44.7, abs=0.3)
    assert info.duration < 0.8 * info.declared_duration
