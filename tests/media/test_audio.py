from __future__ import annotations

import itertools
import shutil
import subprocess

import numpy as np
import pytest

from llama_index_video.errors import UnsupportedMediaError
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio, iter_audio_chunks
from tests_support import OZONE, TEAM_SYNC


def _speech_onsets(samples: np.ndarray, *, window: float = 0.05) -> list[float]:
    """Times where loud audio starts after at least 0.5 s of quiet."""
    size = int(window * SAMPLE_RATE)
    frames = samples[: len(samples) - len(samples) % size].reshape(-1, size)
    loud = np.sqrt(np.square(frames).mean(axis=1)) > 0.01
    onsets, quiet_run = [], 10**9
    for index, is_loud in enumerate(loud):
        if is_loud and quiet_run * window >= 0.5:
            onsets.append(index * window)
        quiet_run = 0 if is_loud else quiet_run + 1
    return onsets


def test_decoded_audio_is_16k_mono_float_on_the_source_timeline(timeline):
    samples = decode_audio(OZONE)
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert len(samples) / SAMPLE_RATE == pytest.approx(80.0, abs=0.1)
    onsets = _speech_onsets(samples)
    for sentence in timeline["ozone_explainer.mp4"]["narration"]:
        assert min(abs(o - sentence["start"]) for o in onsets) < 0.1, sentence


def test_mp3_encoder_delay_does_not_shift_the_timeline(timeline):
    onsets = _speech_onsets(decode_audio(TEAM_SYNC))
    for sentence in timeline["team_sync.mp3"]["narration"]:
        assert min(abs(o - sentence["start"]) for o in onsets) < 0.1, sentence


def test_chunks_are_bounded_contiguous_and_lossless():
    whole = decode_audio(OZONE)
    chunks = list(iter_audio_chunks(OZONE, chunk_seconds=30, search_seconds=5))
    assert len(chunks) == 3
    assert chunks[0].start == 0.0
    for previous, following in itertools.pairwise(chunks):
        assert following.start == pytest.approx(previous.end)
    assert all(len(c.samples) <= 30 * SAMPLE_RATE for c in chunks)
    np.testing.assert_array_equal(np.concatenate([c.samples for c in chunks]), whole)


def test_chunks_are_cut_in_quiet_moments():
    samples = decode_audio(OZONE)
    for chunk in list(iter_audio_chunks(OZONE, chunk_seconds=30, search_seconds=5))[:-1]:
        cut = int(chunk.end * SAMPLE_RATE)
        around = samples[cut - 800 : cut + 800]
        assert np.sqrt(np.square(around).mean()) < 0.01


def test_video_without_audio_has_no_audio_to_decode(tmp_path, make_video):
    silent = make_video(tmp_path / "silent.mp4", [(2.0, (255, 0, 0))], tone=False)
    with pytest.raises(UnsupportedMediaError, match="no audio stream"):
        decode_audio(silent)


def test_one_channel_or_one_track_is_decoded_alone(tmp_path):
    from tests.reader.muxed import write_mkv

    seconds = np.arange(2 * SAMPLE_RATE) / SAMPLE_RATE
    low, high = (0.3 * np.sin(2 * np.pi * f * seconds).astype(np.float32) for f in (200, 700))
    path = write_mkv(tmp_path / "tones.mkv", [np.stack([low, high]), high])

    left, right = (next(iter_audio_chunks(path, channel=c)).samples for c in (0, 1))
    assert np.abs(left - low).max() < 1e-3 and np.abs(right - high).max() < 1e-3
    assert np.abs(decode_audio(path, track=2) - high).max() < 1e-3
    with pytest.raises(UnsupportedMediaError, match="audio track 1 has no channel 2"):
        next(iter_audio_chunks(path, channel=2))
    with pytest.raises(UnsupportedMediaError, match="has 2 audio track"):
        decode_audio(path, track=3)


def test_audio_that_starts_after_the_video_keeps_its_place_on_the_timeline(timeline, tmp_path):
    """A camera or an editor that starts the sound track 10 s into the picture."""
    path = tmp_path / "late_sound.mp4"
    ffmpeg = [shutil.which("ffmpeg") or "ffmpeg", "-nostdin", "-loglevel", "error", "-y"]
    picture = ["-f", "lavfi", "-i", "testsrc=size=96x54:rate=10:duration=52"]
    sound = ["-itsoffset", "10", "-i", str(TEAM_SYNC), "-map", "0:v", "-map", "1:a"]
    codecs = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac"]
    subprocess.run([*ffmpeg, *picture, *sound, *codecs, str(path)], check=True, timeout=120)

    onsets = _speech_onsets(decode_audio(path))

    assert onsets and onsets[0] > 9.5
    for sentence in timeline["team_sync.mp3"]["narration"]:
        assert min(abs(o - 10 - sentence["start"]) for o in onsets) < 0.1, sentence
