"""The ways of titling the meeting benchmark tries (the benchmark itself is not run here)."""

from __future__ import annotations

from benchmarks.meeting_scoring import Turn
from benchmarks.meeting_titles import (
    central_words,
    cued_words,
    first_words,
    noun_words,
    title_ways,
    titler_settings,
    weighed_up,
)
from llama_index_video.chapters import titles


def test_a_noun_phrase_is_the_content_words_after_a_determiner():
    assert noun_words("So we discussed the remote control budget and decided quickly.") == {
        "remote",
        "control",
        "budget",
    }
    assert noun_words("We discussed quickly.") == set()


def test_words_after_an_agenda_cue_are_the_next_items_words():
    text = "Okay. Moving on to the battery dock. Let's talk about the budget, yeah."
    assert cued_words(text) == {"battery", "dock", "budget"}
    assert cued_words("The battery is fine.") == set()


def test_the_first_minute_and_the_central_turns():
    turns = [
        Turn("A", "Let's talk about the budget.", 0.0, 3.0),
        Turn("B", "The battery, the battery dock.", 30.0, 33.0),
        Turn("A", "The battery dock and the battery.", 70.0, 73.0),
        Turn("C", "Lunch tomorrow.", 80.0, 81.0),
    ]
    assert first_words(turns) == {"budget", "battery", "dock"}
    # Of six turns, the five nearest the centroid are the battery's, not the lunch.
    talk = [Turn("A", "The battery dock, the battery.", 10.0 * i, 10.0 * i + 3) for i in range(5)]
    assert central_words([*talk, turns[3]], {}) == {"battery", "dock"}
    assert central_words([Turn("A", "um yeah", 0.0, 1.0)], {}) == set()


def test_weighing_up_a_phrase_and_the_settings_coming_back():
    scores = [{"budget": 2.0, "remote control": 3.0}]
    assert weighed_up(scores, [{"budget"}], 2.0) == [{"budget": 4.0, "remote control": 3.0}]
    with titler_settings(TOPIC_WORD_WEIGHT=0.0):
        assert titles.TOPIC_WORD_WEIGHT == 0.0
    assert titles.TOPIC_WORD_WEIGHT > 0.0


def test_every_way_gives_each_chapter_a_title():
    groups = [
        [Turn("A", "The remote control budget, the budget and the budget.", 0.0, 5.0)],
        [Turn("B", "The remote control battery, the battery dock, the battery.", 6.0, 11.0)],
    ]
    ways = title_ways(groups)
    assert "shipped" in ways and "no topic-word table (weight 0)" in ways and len(ways) == 8
    for made in ways.values():
        assert "budget" in made[0].lower() and "battery" in made[1].lower(), ways
