"""The meeting benchmark's scoring (the benchmark itself is not run here)."""

from __future__ import annotations

import pytest

from benchmarks.meeting_scoring import (
    boundary_f1,
    clean,
    first_found,
    found_at,
    overlaps,
    own_words,
    pk,
    title_matches,
    turn_times,
)


def test_boundaries_match_once_within_the_tolerance():
    assert boundary_f1([100.0, 400.0], [110.0, 120.0, 800.0]) == pytest.approx((1 / 3, 0.5, 0.4))
    assert boundary_f1([100.0], [131.0]) == (0.0, 0.0, 0.0)
    assert boundary_f1([], []) == (1.0, 1.0, 1.0)
    assert boundary_f1([100.0, 400.0], [100.0, 400.0])[2] == 1.0


def test_pk_is_zero_for_the_truth_and_high_for_no_boundaries():
    truth = [300.0, 600.0]
    assert pk(truth, truth, length=900.0) == 0.0
    assert pk(truth, [], length=900.0) > 0.3


def test_turns_are_timed_in_order_and_cleaned_of_marks():
    timed = turn_times([("A", "one two three"), ("B", clean("Okay . {vocalsound} Right ."))])
    assert timed[0].start == 0.0 and timed[1].start > timed[0].end
    assert timed[1].text == "Okay. Right."


def test_titles_match_on_a_shared_content_word_and_spans_overlap():
    assert title_matches("Battery, solar cells", "Energy sources: batteries and solar power")
    assert not title_matches("Budget", "Presentation on market inspirations")
    assert overlaps(10, 20, [(15, 30)]) and not overlaps(10, 20, [(20, 30)])


def test_function_words_and_the_names_of_a_meetings_parts_share_no_topic():
    assert not title_matches("About the meeting", "Meeting about budget")
    assert not title_matches("Those would have", "What those would have to cost")
    assert not title_matches("Presentation, buttons", "Presentations on market trends")
    assert title_matches("Budget meeting", "Meeting about the budgets")


def test_the_first_hit_overlapping_an_answer_stretch_gives_the_rank():
    spans = [(100.0, 160.0), (400.0, 420.0)]
    assert first_found(spans, [(10.0, 20.0), (419.0, 425.0), (120.0, 130.0)]) == 2
    assert first_found(spans, [(160.0, 170.0), (90.0, 100.0)]) is None  # touching is not overlap
    assert first_found(spans, []) is None
    assert [found_at([1, 3, None, 5], k) for k in (1, 3, 5)] == [1, 2, 3]


def test_a_titles_own_words_are_those_no_other_title_of_the_meeting_has():
    titles = ["Remote control, battery", "Remote control, rubber case", "Budget"]
    assert own_words(titles) == [pytest.approx(1 / 3), pytest.approx(2 / 4), 1.0]
    assert own_words(["", "Budget"]) == [0.0, 1.0]
