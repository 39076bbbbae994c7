"""The scoring of benchmarks/long_transcripts.py: edit distance, overlap, facts heard;
the real long recordings it hears (benchmarks/long_real_speech.py)."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmarks.long_real_speech import RECORDINGS, Turn, load_recording
from benchmarks.long_speech_script import FACTS
from benchmarks.long_transcripts import (
    Heard,
    Part,
    heard_real_facts,
    missing_facts,
    part_error_rate,
    real_facts,
    without_overlap,
)
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


def test_a_real_fact_is_a_word_pair_of_a_clip_not_made_of_stop_words_alone():
    turn = Turn("LJ001-0005", 10.0, 16.0, "the invention of movable metal letters")
    facts = {fact for fact, _, _ in real_facts([turn])}
    assert "LJ001-0005:movable metal" in facts
    assert "LJ001-0005:invention of" in facts  # "invention" is a content word
    assert "LJ001-0005:the invention" in facts
    assert not any(fact.endswith(":of the") for fact in facts)


def test_a_real_fact_is_heard_only_in_text_heard_near_its_clip():
    turns = [
        Turn("a", 10.0, 16.0, "the invention of movable metal letters"),
        Turn("b", 40.0, 44.0, "printed in france"),
    ]
    heard = [
        Heard(9.0, 17.0, "The invention of movable metal letters."),
        Heard(60, 63, "in France"),
    ]
    found = heard_real_facts(heard, turns)
    assert "a:movable metal" in found and "a:metal letters" in found
    assert not any(fact.startswith("b:") for fact in found)  # "in france" heard 16 s later
    misheard = [Heard(9.0, 17.0, "The invention of movable medal letters.")]
    assert "a:movable metal" not in heard_real_facts(misheard, turns)


def test_a_clip_read_twice_is_judged_by_what_was_heard_near_each_reading():
    # Two readings of one book joined: the second reader's clip has the first's id.
    turns = [
        Turn("LJ1", 10.0, 16.0, "the invention of movable metal letters"),
        Turn("LJ1", 900.0, 906.0, "the invention of movable metal letters"),
    ]
    heard = [Heard(9.0, 17.0, "The invention of movable metal letters.")]
    found = heard_real_facts(heard, turns)
    assert found.count("LJ1:movable metal") == 1  # heard near the first reading only


@pytest.mark.parametrize("source", RECORDINGS, ids=lambda source: source.name)
def test_each_kept_real_recording_has_its_reference_in_order_and_its_audio(source):
    import av

    audio, turns = load_recording(source.name)
    assert len(turns) > 90 and turns[0].start == 0.0
    assert all(a.end < b.start for a, b in itertools.pairwise(turns))
    assert all(turn.text.strip() and turn.end > turn.start for turn in turns)
    with av.open(str(audio)) as container:
        seconds = container.duration / av.time_base
    assert abs(seconds - turns[-1].end) < 1.0
    assert 600 < seconds < 2400  # each at least 10 minutes: a long recording


def test_each_part_of_a_joined_recording_is_scored_on_what_was_heard_inside_it():
    first = Part("one", 0.0, 10.25, "the press was idle")
    second = Part("two", 10.25, 20.0, "the ink was dry")
    heard = [Heard(1.0, 4.0, "The press was idle."), Heard(10.4, 14.0, "The ink was wet.")]
    assert part_error_rate(first, heard) == 0.0
    assert part_error_rate(second, heard) == 0.25
    assert part_error_rate(second, heard[:1]) == 1.0  # nothing heard there
