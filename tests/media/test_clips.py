"""Clip cutting: windows, keyframe-exact copies, re-encodes, audio, reuse, odd file names.

The test videos have one flat colour per second (``synthetic.COLOURS``), so the
first decoded frame of a clip tells which second of the source it starts in.
ffmpeg is the one on PATH, else the binary bundled with imageio-ffmpeg.
"""

from __future__ import annotations

import itertools
import shutil
import sys
from pathlib import Path

import av
import numpy as np
import pytest

from llama_index_video.errors import MediaError, MissingDependencyError, UnsupportedMediaError
from llama_index_video.media import clips as clips_module
from llama_index_video.media import ffmpeg as ffmpeg_module
from llama_index_video.media.clips import VIDEO_WITH_AUDIO_SECONDS, Clip, cut_clips
from llama_index_video.media.ffmpeg import ffmpeg_executable, run_ffmpeg
from llama_index_video.media.probe import probe
from tests.media.synthetic import COLOURS, write_audio, write_video

HASH = "0123456789abcdef" * 4


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 s at 10 fps, a keyframe every 2 s, with a tone."""
    return write_video(tmp_path_factory.mktemp("src") / "talk.mp4", seconds=12.0, gop=20)


def first_colour(path: Path) -> int:
    """Index in ``COLOURS`` of the clip's first frame."""
    with av.open(str(path)) as container:
        frame = next(container.decode(video=0))
    pixel = frame.to_ndarray(format="rgb24")[frame.height // 2, frame.width // 2].astype(int)
    return int(np.argmin([np.abs(pixel - np.array(c)).sum() for c in COLOURS]))


def assert_covering(clips: list[Clip], duration: float, max_seconds: float, overlap: float) -> None:
    """The invariants of every cut: ordered, bounded, overlapping, complete."""
    assert clips[0].start == 0.0
    assert clips[-1].end == pytest.approx(duration, abs=0.05)
    for clip in clips:
        assert 0 < clip.duration <= max_seconds + 1e-6
        assert clip.path.is_file()
    for before, after in itertools.pairwise(clips):
        assert after.start > before.start
        assert before.end - after.start >= overlap - 1e-6


def test_copied_clips_start_on_keyframes_and_cover_everything(video, tmp_path):
    clips = list(
        cut_clips(video, out_dir=tmp_path, content_hash=HASH, max_seconds=5, overlap_seconds=1.5)
    )

    assert_covering(clips, 12.0, 5, 1.5)
    # Windows ask for 3.5 s, 5.5 s, ... ; copies start on the keyframe before (every 2 s).
    assert [c.start for c in clips] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert [first_colour(c.path) for c in clips] == [int(c.start) % len(COLOURS) for c in clips]
    for clip in clips:
        info = probe(clip.path)
        assert info.video_codec == "h264" and info.has_audio
        assert info.duration == pytest.approx(clip.duration, abs=0.1)
        assert clip.mimetype == "video/mp4" and clip.modality == "video"
        assert clip.source == video and clip.content_hash == HASH


def test_windows_far_from_a_keyframe_are_re_encoded_exactly(tmp_path):
    sparse = write_video(tmp_path / "sparse.mp4", seconds=9.0, gop=50)  # keyframes 0 s, 5 s
    clips = list(
        cut_clips(
            sparse, out_dir=tmp_path / "out", content_hash=HASH, max_seconds=4, overlap_seconds=1
        )
    )

    assert_covering(clips, 9.0, 4, 1)
    # 3 s is 3 s past the keyframe at 0 s: re-encoded; 6 s is 1 s past 5 s: copied.
    assert [c.start for c in clips] == [0.0, 3.0, 5.0]
    assert [first_colour(c.path) for c in clips] == [0, 3, 0]
    for clip in clips:
        assert probe(clip.path).duration == pytest.approx(clip.duration, abs=0.1)


def test_codecs_the_model_may_not_read_are_re_encoded(tmp_path):
    source = tmp_path / "vp8.webm"
    with av.open(str(source), "w") as container:
        stream = container.add_stream("libvpx", rate=10)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for index in range(30):
            pixels = np.full((32, 32, 3), COLOURS[index // 10], dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts = index
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))

    clips = list(
        cut_clips(
            source, out_dir=tmp_path / "out", content_hash=HASH, max_seconds=2, overlap_seconds=0.5
        )
    )

    assert_covering(clips, 3.0, 2, 0.5)
    assert [probe(c.path).video_codec for c in clips] == ["h264", "h264"]
    assert first_colour(clips[1].path) == 1


def test_a_failed_copy_falls_back_to_re_encoding(video, tmp_path, monkeypatch):
    broken = {**clips_module._COPY_OPTIONS, "no_such_option": "1"}
    monkeypatch.setattr(clips_module, "_COPY_OPTIONS", broken)
    clips = list(
        cut_clips(video, out_dir=tmp_path, content_hash=HASH, max_seconds=5, overlap_seconds=1.5)
    )
    # The planned windows, re-encoded: the plan does not depend on whether a copy works.
    assert [c.start for c in clips] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert [first_colour(c.path) for c in clips] == [0, 2, 4, 1, 3]
    assert_covering(clips, 12.0, 5, 1.5)
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


@pytest.mark.parametrize(("audio_format", "mimetype"), [("mp3", "audio/mp3"), ("wav", "audio/wav")])
def test_audio_clips_from_video_and_from_audio(video, tmp_path, audio_format, mimetype):
    tone = write_audio(tmp_path / "tone.m4a", seconds=7.0)
    for source, duration in ((video, 12.0), (tone, 7.0)):
        clips = list(
            cut_clips(
                source,
                out_dir=tmp_path / "out",
                content_hash=HASH,
                modality="audio",
                audio_format=audio_format,
                max_seconds=3,
                overlap_seconds=0.5,
            )
        )
        assert_covering(clips, duration, 3, 0.5)
        for clip in clips:
            info = probe(clip.path)
            assert not info.has_video and info.channels == 1
            assert info.duration == pytest.approx(clip.duration, abs=0.1)
            assert clip.mimetype == mimetype and clip.path.suffix == f".{audio_format}"


def test_defaults_follow_the_model_limits(tmp_path, video):
    (clip,) = cut_clips(video, out_dir=tmp_path, content_hash=HASH)
    assert (clip.start, clip.end) == (0.0, 12.0)  # one window: 12 s < 120 s
    assert VIDEO_WITH_AUDIO_SECONDS == 80.0
    assert clips_module.DEFAULT_WINDOWS == {"video": (120.0, 10.0), "audio": (80.0, 5.0)}


def test_cutting_again_reuses_the_clips(video, tmp_path, monkeypatch):
    options = {"out_dir": tmp_path, "content_hash": HASH, "max_seconds": 5, "overlap_seconds": 1}
    first = list(cut_clips(video, **options))
    stamps = [c.path.stat().st_mtime_ns for c in first]

    def no_ffmpeg(*args: object, **kwargs: object) -> None:
        raise AssertionError("ffmpeg ran again")

    monkeypatch.setattr(clips_module, "run_ffmpeg", no_ffmpeg)
    again = list(cut_clips(video, **options))

    assert again == first
    assert [c.path.stat().st_mtime_ns for c in again] == stamps
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(c.path.name for c in first)


def test_names_derive_from_content_and_window(video, tmp_path):
    clip = next(cut_clips(video, out_dir=tmp_path, content_hash=HASH, max_seconds=5))
    assert clip.path.name == f"{HASH[:16]}_video_000000000-000005000.mp4"


@pytest.mark.parametrize(
    "name", ["my talk 'final' \"v2\".mp4", "café – über ü.mp4", "-starts-with-dash.mp4", "a:b.mp4"]
)
def test_awkward_file_names(video, tmp_path, name):
    folder = tmp_path / "out dir with spaces"
    source = tmp_path / name
    shutil.copy(video, source)
    clips = list(cut_clips(source, out_dir=folder, content_hash=HASH, max_seconds=6))
    audio = list(
        cut_clips(source, out_dir=folder, content_hash=HASH, modality="audio", max_seconds=6)
    )
    assert len(clips) == 3 and len(audio) == 3
    assert all(probe(c.path).duration > 0 for c in clips + audio)


def test_no_partial_files_are_left_behind(video, tmp_path):
    list(cut_clips(video, out_dir=tmp_path, content_hash=HASH, max_seconds=5))
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


def test_clips_are_cut_lazily(video, tmp_path):
    clips = cut_clips(video, out_dir=tmp_path, content_hash=HASH, max_seconds=3, overlap_seconds=0)
    next(clips)
    assert len(list(tmp_path.glob("*.mp4"))) == 1


def test_wrong_modality_is_refused(video, tmp_path):
    silent = write_video(tmp_path / "silent.mp4", seconds=2.0, tone_hz=None)
    tone = write_audio(tmp_path / "tone.wav", seconds=2.0)
    with pytest.raises(UnsupportedMediaError, match="no audio stream"):
        cut_clips(silent, out_dir=tmp_path, content_hash=HASH, modality="audio")
    with pytest.raises(UnsupportedMediaError, match="no video stream"):
        cut_clips(tone, out_dir=tmp_path, content_hash=HASH)


@pytest.mark.parametrize(
    "options",
    [
        {"max_seconds": 0},
        {"overlap_seconds": -1},
        {"max_seconds": 5, "overlap_seconds": 5},
        {"modality": "frames"},
        {"audio_format": "ogg"},
        {"max_copy_shift": -1},
        {"content_hash": "abc"},
    ],
)
def test_bad_options_are_refused_before_any_work(video, tmp_path, options):
    settings = {"out_dir": tmp_path / "out", "content_hash": HASH, **options}
    with pytest.raises(ValueError):
        cut_clips(video, **settings)
    assert not (tmp_path / "out").exists()


def test_ffmpeg_on_path_is_preferred(monkeypatch):
    ffmpeg_executable.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: f"/opt/bin/{name}")
    try:
        assert ffmpeg_executable() == "/opt/bin/ffmpeg"
    finally:
        ffmpeg_executable.cache_clear()


def test_without_any_ffmpeg_the_gemini_extra_is_named(video, tmp_path, monkeypatch):
    ffmpeg_executable.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    try:
        with pytest.raises(MissingDependencyError, match=r"llama-index-video\[gemini\]"):
            cut_clips(video, out_dir=tmp_path, content_hash=HASH)
    finally:
        ffmpeg_executable.cache_clear()


def test_ffmpeg_failures_name_the_file_and_carry_stderr(tmp_path):
    missing = tmp_path / "missing.mp4"
    with pytest.raises(
        MediaError, match=r"(?s)missing\.mp4: ffmpeg failed \(exit \d+\).*No such file"
    ):
        run_ffmpeg(
            [ffmpeg_executable(), "-i", str(missing), str(tmp_path / "x.mp4")], source=missing
        )


def test_without_ffmpeg_on_path_the_bundled_binary_is_used(monkeypatch):
    import imageio_ffmpeg

    ffmpeg_executable.cache_clear()
    monkeypatch.setattr(ffmpeg_module.shutil, "which", lambda name: None)
    try:
        assert ffmpeg_executable() == imageio_ffmpeg.get_ffmpeg_exe()
    finally:
        ffmpeg_executable.cache_clear()


@pytest.mark.parametrize(
    ("make", "modality", "duration"),
    [
        # An ordinary ffmpeg MP3 of 39.9884 s: probed 39.98839 s, the clip ends at 39.988 s.
        ("-f lavfi -i sine=duration=39.9884 -c:a libmp3lame", "audio", 39.98839),
        # 2068 frames at 30 fps: 68.933333 s, the clip ends at 68.933 s.
        (
            "-f lavfi -i testsrc=size=64x48:rate=30:duration=68.92 -f lavfi -i sine=duration=68.92"
            " -c:v libx264 -c:a aac",
            "video",
            68.933333,
        ),
    ],
    ids=["mp3-40s", "mp4-69s"],
)
def test_a_duration_between_milliseconds_ends_the_cut(tmp_path, make, modality, duration):
    """Defect 1 of issue 10: the last clip was yielded again forever (5 GB in 5 minutes)."""
    suffix = ".mp3" if modality == "audio" else ".mp4"
    source = tmp_path / f"ordinary{suffix}"
    run_ffmpeg([ffmpeg_executable(), "-v", "error", *make.split(), str(source)], source=source)
    assert probe(source).duration == pytest.approx(duration, abs=1e-6)

    clips = cut_clips(source, out_dir=tmp_path / "out", content_hash=HASH, modality=modality)
    # islice: on the old code this list would never end.
    first = list(itertools.islice(clips, 5))

    assert [(c.start, c.end) for c in first] == [(0.0, round(duration, 3))]
