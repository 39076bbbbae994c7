"""The check of ``benchmarks/meeting_trial.py``: a first hit counts at its sentence and
naming its reader."""

from __future__ import annotations

from benchmarks.meeting_trial import QUESTIONS, TOLERANCE_SECONDS, score, starts_at


def test_a_hit_counts_within_the_tolerance_of_any_of_its_sentences():
    assert starts_at(689.6 + TOLERANCE_SECONDS, (689.6, 685.4))
    assert starts_at(683.0, (689.6, 685.4))
    assert not starts_at(689.7 + TOLERANCE_SECONDS, (689.6,))


def test_each_question_is_scored_by_its_own_first_hit():
    right = [(starts[0] + 1.0, reader) for _, starts, reader in QUESTIONS]
    assert score(right).first == len(QUESTIONS) == score(right).asked
    readers = sum(reader is not None for _, _, reader in QUESTIONS)
    assert score(right).named == readers == score(right).asked_named
    wrong_place = [(starts[0] + 100.0, reader) for _, starts, reader in QUESTIONS]
    assert score(wrong_place).first == 0 and score(wrong_place).named == readers
    nothing = [None] * len(QUESTIONS)
    assert score(nothing) == type(score(nothing))(0, len(QUESTIONS), 0, readers)
