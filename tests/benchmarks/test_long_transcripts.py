"""The scoring of benchmarks/long_transcripts.py: edit distance, overlap, facts heard."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmarks.long_speech_script import FACTS
from benchmarks.long_transcripts import Heard, missing_facts, without_overlap
from benchmarks.scoring import edit_distance


def _slow_distance(a, b) -> int:
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        table[i][j] = min(
            table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1])
        )
    return table[-1][-1]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("abc", "", 3), ("same", "same", 0)],
)
def test_edit_distance_of_known_pairs(a, b, distance):
    assert edit_distance(list(a), list(b)) == distance


def test_edit_distance_agrees_with_the_full_table_on_random_word_lists():
    rng = random.Random(7)
    for _ in range(200):
        a = rng.choices("abcd", k=rng.randint(0, 12))
        b = rng.choices("abcde", k=rng.randint(0, 12))
        assert edit_distance(a, b) == _slow_distance(a, b)


def test_words_a_unit_repeats_from_the_one_before_count_once():
    units = [
        Heard(0.0, 10.0, "the club meets every thursday in the old library"),
        Heard(8.5, 15.0, "in the old library basement at seven"),  # cut mid-sentence
        Heard(16.0, 20.0, "in the old town"),  # after a pause: nothing repeated
    ]
    assert [u.text for u in without_overlap(units)] == [
        "the club meets every thursday in the old library",
        "basement at seven",
        "in the old town",
    ]


def test_a_fact_is_missing_when_its_answer_is_not_heard_near_where_it_was_said():
    chess = next(f for f in FACTS if f.id == "chess")
    facts = {"chess": (100.0, 105.0)}
    heard_there = [Heard(99.0, 106.0, "The chess club meets every Thursday evening.")]
    heard_elsewhere = [Heard(300.0, 306.0, "The chess club meets every Thursday evening.")]
    assert chess.answer and missing_facts(heard_there, facts) == []
    assert missing_facts(heard_elsewhere, facts) == ["chess"]
    assert missing_facts([Heard(99.0, 106.0, "The chess club meets weekly.")], facts) == ["chess"]
