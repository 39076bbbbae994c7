from __future__ import annotations

import pytest

from benchmarks.scoring import (
    Question,
    RankedHit,
    answer_in_context,
    answered_rate,
    balanced_accuracy,
    best_cut,
    first_hit_rank,
    folds,
    normalise,
    rejection_rate,
    summarise,
)

TIMED = Question("q", "spoken", "?", "talk.mp4", 30.0, 35.0, ("100 percent", "one hundred percent"))
DOCUMENT = Question("d", "document", "?", "notes.md", None, None, ("tuesdays&thursdays",))
NONE = Question("n", "none", "?")


def hit(file="talk.mp4", start=30.0, end=35.0, text=""):
    return RankedHit(file, start, end, text)


def test_normalise_folds_case_punctuation_and_width():
    assert normalise("UV-C: 100%,  ＡＢ") == "uv c 100 ab"


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(20.0, 29.6, True), (35.4, 40.0, True), (20.0, 29.0, False), (36.0, 40.0, False)],
)
def test_a_hit_must_overlap_the_moment_within_tolerance(start, end, expected):
    assert first_hit_rank(TIMED, [hit(start=start, end=end)]) == (1 if expected else None)


def test_wrong_file_or_untimed_hit_is_not_a_hit_for_a_timed_question():
    assert first_hit_rank(TIMED, [hit(file="other.mp4"), hit(start=None, end=None)]) is None


def test_documents_match_by_file():
    assert first_hit_rank(DOCUMENT, [hit(), hit(file="notes.md", start=None, end=None)]) == 2


def test_answer_needs_every_part_of_one_alternative_in_the_top_three():
    hits = [hit(text="deploys on Tuesdays"), hit(), hit(), hit(text="and Thursdays")]
    assert not answer_in_context(DOCUMENT, hits)
    assert answer_in_context(DOCUMENT, [hit(text="Tuesdays"), hit(text="Thursdays.")])
    assert answer_in_context(TIMED, [hit(text="It absorbs 100 percent of UV-C")])
    assert not answer_in_context(TIMED, [hit(text="It absorbs 1100 percent")])


def test_summary_counts_only_answerable_questions():
    results = [
        (TIMED, [hit(start=0, end=1), hit(text="one hundred percent")]),
        (DOCUMENT, []),
        (NONE, []),
    ]
    summary = summarise(results)
    assert summary.count == 2
    assert summary.recall == {1: 0.0, 3: 0.5, 5: 0.5}
    assert summary.mrr == pytest.approx(0.25)
    assert summary.answer_at_3 == 0.5


def test_rejection_rate_counts_empty_results_for_no_answer_questions():
    assert rejection_rate([(NONE, []), (NONE, [hit()]), (TIMED, [])]) == 0.5


def test_answered_rate_counts_answerable_questions_with_hits():
    results = [(TIMED, [hit()]), (DOCUMENT, []), (NONE, [hit()])]
    assert answered_rate(results) == 0.5


def test_balanced_accuracy_weighs_both_classes_equally():
    labels = [True, True, True, False]
    assert balanced_accuracy(labels, [True, True, True, True]) == 0.5
    assert balanced_accuracy(labels, [True, True, False, False]) == pytest.approx((2 / 3 + 1) / 2)
    weighted = balanced_accuracy(labels, [True, True, False, False], answer_weight=2.0)
    assert weighted == pytest.approx((2 * 2 / 3 + 1) / 3)


def test_a_heavier_missed_answer_moves_the_cut_down():
    labels = [True, True, False, True, False, False]
    scores = [0.9, 0.8, 0.6, 0.5, 0.3, 0.2]
    assert best_cut(labels, scores).value == pytest.approx(0.7)
    assert best_cut(labels, scores, answer_weight=3.0).value == pytest.approx(0.4)


def test_best_cut_separates_and_sits_in_the_widest_gap():
    labels = [True, True, False, False]
    cut = best_cut(labels, [0.9, 0.5, 0.3, 0.1])
    assert cut.accuracy == 1.0 and cut.value == pytest.approx(0.4)
    overlapping = best_cut([True, False, True, False], [0.6, 0.5, 0.4, 0.2])
    assert overlapping.accuracy == 0.75 and overlapping.value == pytest.approx(0.3)
    with pytest.raises(ValueError):
        best_cut([], [])


def test_folds_are_disjoint_stratified_and_stable():
    questions = [Question(f"a{i}", "spoken", "?") for i in range(7)] + [
        Question(f"n{i}", "none", "?") for i in range(5)
    ]
    split = folds(questions, 3)
    assert split == folds(list(reversed(questions)), 3)
    assert sorted(q.id for fold in split for q in fold) == sorted(q.id for q in questions)
    for fold in split:
        assert 2 <= sum(q.answerable for q in fold) <= 3
        assert 1 <= sum(not q.answerable for q in fold) <= 2
