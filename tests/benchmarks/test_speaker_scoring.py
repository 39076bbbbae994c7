from __future__ import annotations

import pytest

from benchmarks.speaker_scoring import (
    SpeakerQuestion,
    attributed_correctly,
    diarization_error_rate,
)

REFERENCE = [(0.0, 10.0, "ana"), (10.0, 20.0, "ben")]


def test_a_perfect_hypothesis_scores_zero_whatever_its_names():
    score = diarization_error_rate(REFERENCE, [(0.0, 10.0, "X"), (10.0, 20.0, "Y")])
    assert score.error_rate == 0.0
    assert score.speech == pytest.approx(19.0, abs=0.05)  # 20 s less the collars


def test_confusion_missed_and_false_alarm_are_fractions_of_scored_speech():
    one_speaker = diarization_error_rate(REFERENCE, [(0.0, 20.0, "X")], collar=0.0)
    assert one_speaker.confusion == pytest.approx(0.5, abs=0.01)
    half_missed = diarization_error_rate(REFERENCE, [(0.0, 10.0, "X")], collar=0.0)
    assert half_missed.missed == pytest.approx(0.5, abs=0.01)
    assert half_missed.confusion == 0.0
    extra = diarization_error_rate(REFERENCE, [*REFERENCE, (25.0, 30.0, "ana")], collar=0.0)
    assert extra.false_alarm == pytest.approx(0.25, abs=0.01)


def test_the_collar_forgives_boundary_slips():
    shifted = [(0.0, 10.2, "X"), (10.2, 20.0, "Y")]
    assert diarization_error_rate(REFERENCE, shifted, collar=0.25).error_rate == 0.0
    assert diarization_error_rate(REFERENCE, shifted, collar=0.0).confusion > 0


def test_a_question_is_answered_when_the_best_hit_covers_the_turn():
    question = SpeakerQuestion(2, "budget", 5.5)
    assert attributed_correctly(question, [(5.3, 9.0), (0.0, 4.0)])
    assert not attributed_correctly(question, [(0.0, 4.0), (5.3, 9.0)])
    assert not attributed_correctly(question, [])
