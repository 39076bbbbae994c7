"""Voices across recordings: the decision rule, and which speech a voice is heard in.

Real voices: ``ami_dev00`` of tests/fixtures/real_speech (AMI ES2003a; source and
licence in its ``.json``), reference turns in its ``.rttm``.
"""

from __future__ import annotations

import subprocess

import numpy as np

from benchmarks.speaker_scoring import read_rttm
from llama_index_video.speakers.voices import (
    best_voice,
    centroid,
    heard_labels,
    spread_units,
    voice_centroids,
    voice_windows,
)
from tests_support import ROOT

MEETING = ROOT / "tests" / "fixtures" / "real_speech" / "ami_dev00.flac"


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_best_voice_names_the_best_above_the_threshold_and_the_margin():
    voices = {"Ann": unit(1, 0, 0), "Bo": unit(0.8, 0.6, 0)}
    heard = unit(1, 0.1, 0)  # Ann 0.995, Bo 0.856
    assert best_voice(heard, voices, threshold=0.9, margin=0.0) == "Ann"
    assert best_voice(heard, voices, threshold=0.999, margin=0.0) is None
    assert best_voice(heard, voices, threshold=0.9, margin=0.2) is None  # Bo too close
    assert best_voice(heard, {"Ann": voices["Ann"]}, threshold=0.9, margin=0.2) == "Ann"
    assert best_voice(heard, {}, threshold=0.0) is None


def test_a_voice_is_heard_in_its_long_units_when_it_has_any():
    turns = [(a, b) for a, b, who in read_rttm(MEETING.with_suffix(".rttm")) if who == "MEE009"]
    long = [(a, b) for a, b in turns if b - a >= 2.0]
    short = [(a, b) for a, b in turns if b - a < 2.0]
    assert long and short
    only_long = voice_centroids(MEETING, {"v": long})["v"]
    both = voice_centroids(MEETING, {"v": turns}, min_unit=2.0)["v"]
    assert np.allclose(both, only_long, atol=1e-5)
    everything = voice_centroids(MEETING, {"v": turns}, min_unit=0.0)["v"]
    assert not np.allclose(everything, only_long, atol=1e-3)
    # a voice with no long unit is heard in the short ones
    assert np.allclose(
        voice_centroids(MEETING, {"v": short}, min_unit=2.0)["v"],
        voice_centroids(MEETING, {"v": short}, min_unit=0.0)["v"],
        atol=1e-5,
    )


def test_a_voices_windows_are_unit_length_and_their_mean_is_its_centroid():
    turns = [(a, b) for a, b, who in read_rttm(MEETING.with_suffix(".rttm")) if who == "MEE009"]
    longest = max(turns, key=lambda t: t[1] - t[0])  # 11.9 s: windows of 2 s every 1 s
    windows = voice_windows(MEETING, {"v": [longest], "none": [(29.9, 29.95)]})
    assert set(windows) == {"v"}  # 0.05 s holds no window of speech
    vectors = windows["v"]
    assert vectors.shape[1] == 192 and 6 <= len(vectors) <= 11
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    heard = voice_centroids(MEETING, {"v": [longest]}, min_unit=0.0)["v"]
    assert np.allclose(centroid(vectors), heard, atol=1e-5)


def test_a_voice_whose_long_units_hold_no_speech_is_heard_in_the_others(tmp_path):
    """One rule for which units a voice is heard in, whether a label is named by hand or
    from the library: its long units with speech, or all with speech when none is long.
    Before, a hand-named label whose only long unit was silence got no voice."""
    padded = tmp_path / "padded.flac"
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(MEETING)]
    subprocess.run([*command, "-af", "apad=pad_dur=4", str(padded)], check=True)
    turns = [(a, b) for a, b, who in read_rttm(MEETING.with_suffix(".rttm")) if who == "MEE012"]
    short = [(a, b) for a, b in turns if b - a < 2.0]
    silent = (30.5, 33.5)  # the padding: a long unit with no speech
    heard = voice_centroids(padded, {"v": [*short, silent]})
    assert np.allclose(heard["v"], voice_centroids(padded, {"v": short})["v"], atol=1e-5)
    labels = heard_labels(padded, {"v": [*short, silent]})
    assert np.allclose(labels["v"].voice, heard["v"], atol=1e-5)
    assert labels["v"].units[-1] is None


def test_a_named_voice_is_heard_in_long_units_spread_over_the_recording():
    units = [(60.0 * n, 60.0 * n + 10.0) for n in range(20)] + [(5.0, 6.0)]  # 200 s long
    some = spread_units(units, 60.0)
    assert len(some) == 6 and some[0] == (0.0, 10.0) and some[-1] == (1140.0, 1150.0)
    assert all(b - a >= 2.0 for a, b in some)
    assert spread_units(units[:5], 60.0) == units[:5]  # 50 s: all of them
