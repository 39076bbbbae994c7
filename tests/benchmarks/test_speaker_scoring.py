from __future__ import annotations

import pytest

from benchmarks.speaker_scoring import (
    SpeakerQuestion,
    UnitPurity,
    attributed_correctly,
    diarization_error_rate,
    read_rttm,
    speaker_count,
    speaker_mapping,
    unit_purity,
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


def test_the_speaker_count_leaves_out_voices_heard_for_under_two_seconds():
    turns = [(0.0, 5.0, "a"), (5.0, 6.0, "b"), (6.0, 6.5, "b"), (7.0, 10.0, "c"), (10.0, 10.4, "d")]
    assert speaker_count(turns) == 2
    assert speaker_count(turns, min_seconds=0.1) == 4
    assert speaker_count([]) == 0


def test_the_mapping_pairs_each_found_speaker_with_the_voice_it_covers_most():
    found = [(0.0, 9.0, "S2"), (9.0, 20.0, "S1"), (20.0, 25.0, "S3")]
    assert speaker_mapping(REFERENCE, found) == {"S2": "ana", "S1": "ben"}
    assert speaker_mapping(REFERENCE, []) == {}


def test_unit_purity_judges_each_word_by_who_was_speaking_at_its_middle():
    words = [(1.0, 1.5), (2.0, 2.5), (9.0, 9.5), (10.5, 11.0), (30.0, 30.5)]
    mapping = {"X": "ana", "Y": "ben"}
    clean = unit_purity(REFERENCE, [(0.5, 9.6, "X"), (10.2, 11.2, "Y")], words, mapping)
    assert clean == UnitPurity(units=2, purity=1.0, pure_units=1.0, labelled_right=1.0)
    # one unit running over the change: 3 words of ana, 1 of ben
    mixed = unit_purity(REFERENCE, [(0.5, 11.2, "Y")], words, mapping)
    assert mixed.purity == pytest.approx(0.75) and mixed.pure_units == 0.0
    assert mixed.labelled_right == 0.0  # Y maps to ben, the unit is mostly ana's
    # a word in an overlap belongs to both voices; words in silence are not counted
    overlapping = [(0.0, 10.0, "ana"), (9.0, 12.0, "ben")]
    both = unit_purity(overlapping, [(8.0, 11.2, "Y")], words, mapping)
    assert both.purity == 1.0 and both.labelled_right == 1.0
    assert unit_purity(REFERENCE, [(29.0, 31.0, "X")], words).units == 0


def test_rttm_lines_become_turns(tmp_path):
    path = tmp_path / "call.rttm"
    path.write_text(
        "SPEAKER call 1 6.690 0.430 <NA> <NA> Diane <NA> <NA>\n"
        "SPEAKER call 1 7.550 0.800 <NA> <NA> Sheila <NA> <NA>\n"
        "# a comment\n"
    )
    assert read_rttm(path) == [(6.69, pytest.approx(7.12), "Diane"), (7.55, 8.35, "Sheila")]
