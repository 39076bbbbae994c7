"""The long-speech benchmark's plan and scoring (the benchmark itself is not run here)."""

from __future__ import annotations

import pytest

from benchmarks.long_speech import percentile, questions, score, seek_error
from benchmarks.long_speech_script import FACTS, UNANSWERABLE, digest, plan
from benchmarks.scoring import Question, RankedHit

PARAGRAPHS = [
    f"Paragraph {i} opens here. It goes on for a while. It ends in a full stop." for i in range(40)
]


@pytest.mark.parametrize("minutes", [5, 20, 60])
def test_the_plan_says_every_fact_and_distractor_once_in_order(minutes):
    items = plan(minutes, paragraphs=PARAGRAPHS)
    said = [item.text for item in items if item.kind == "speech"]
    for fact in FACTS:
        assert said.count(fact.sentence) == 1 and said.count(fact.distractor) == 1
    facts = [item.fact for item in items if item.fact]
    assert facts == [fact.id for fact in FACTS]  # spread over the recording, in order
    words = sum(len(text.split()) for text in said)
    quiet = sum(item.seconds for item in items)
    assert minutes * 60 * 0.8 <= words / 2.5 + quiet <= minutes * 60 * 1.3 + 120


def test_the_plan_is_the_same_for_a_seed_and_its_key_names_it():
    first, again = plan(20, paragraphs=PARAGRAPHS), plan(20, paragraphs=PARAGRAPHS)
    assert first == again and digest(first) == digest(again)
    other = plan(20, seed=7, paragraphs=PARAGRAPHS)
    assert digest(other) != digest(first)
    assert {i.kind for i in first} <= {"speech", "silence", "music"}


def _fact(start: float = 100.0, end: float = 104.0) -> Question:
    return Question("chess", "spoken", "Which day?", "rec.wav", start, end, ("thursday",))


def _hit(start: float, end: float, text: str = "", file: str = "rec.wav") -> RankedHit:
    return RankedHit(file, start, end, text)


def test_questions_carry_the_fact_times_and_end_with_the_unanswerable():
    asked = questions({"chess": (10.0, 13.5)}, "rec.wav")
    assert asked[0] == Question(
        "chess", "spoken", FACTS[0].question, "rec.wav", 10.0, 13.5, FACTS[0].answer
    )
    assert [q.question for q in asked[1:]] == list(UNANSWERABLE)
    assert not any(q.answerable for q in asked[1:])


def test_the_seek_error_is_the_overlapping_hits_start_minus_the_facts():
    fact = _fact()
    assert seek_error(fact, [_hit(0, 10), _hit(98.5, 110)]) == -1.5
    assert seek_error(fact, [_hit(0, 10)]) is None
    assert seek_error(fact, [_hit(0, 1), _hit(2, 3), _hit(4, 5), _hit(100, 104)]) is None


def test_scores_per_recipe():
    fact = _fact()
    missed = Question("pool", "spoken", "Until when?", "rec.wav", 500.0, 503.0, ("october",))
    empty = Question("robot", "spoken", "Called?", "rec.wav", 700.0, 702.0, ("pebble",))
    none = [Question(f"none_{i}", "none", "?") for i in range(4)]
    results = [
        (fact, [_hit(101.0, 108.0, "practice on Thursday")]),
        (missed, [_hit(10, 20), _hit(499.0, 510.0, "closed until October")]),
        (empty, []),
        (none[0], []),
        (none[1], []),
        (none[2], []),
        (none[3], [_hit(1, 2)]),
    ]
    figures = score(results)
    assert figures.answerable == 3 and figures.unanswerable == 4
    assert figures.r_at_1 == pytest.approx(1 / 3) and figures.r_at_3 == pytest.approx(2 / 3)
    assert figures.answer_at_3 == pytest.approx(2 / 3)
    assert figures.empty == 1 and figures.turned_away == 0.75
    assert figures.seek_median_s == 1.0 and figures.seek_p95_s == 1.0
    assert figures.seek_signed_median_s == 0.0  # +1.0 and -1.0


def test_percentile_is_the_nearest_rank():
    values = list(range(1, 21))
    assert percentile(values, 0.95) == 19 and percentile(values, 0.5) == 10
    assert percentile([3.0], 0.95) == 3.0


def test_margins_say_where_a_threshold_could_go():
    fact = _fact()
    none = Question("none_0", "none", "?")
    results = [(fact, [_hit(0, 5), _hit(100.0, 104.0)]), (none, [_hit(1, 2)])]
    figures = score(results, {"chess": [0.5, 0.31], "none_0": [0.42]})
    assert figures.lowest_found_score == 0.31
    assert figures.highest_unanswerable_score == 0.42
    assert score(results).lowest_found_score is None
