"""The decisions benchmark's annotation rules and scoring (the benchmark is not run here)."""

from __future__ import annotations

import gzip
import json

from benchmarks.decision_annotations import FOLDER, SERIES, annotations, kind
from benchmarks.decision_scoring import found, precision, recall, units_of
from benchmarks.meeting_scoring import turn_times

TURNS = turn_times(
    [
        ("Project Manager", "Welcome. Today we choose the case."),
        ("Industrial Designer", "Rubber is cheap. Plastic is cheaper still. " * 6),
        ("Marketing", "So we go for rubber then."),
        ("Project Manager", "And you look into the chips for next time."),
    ]
)


def test_answer_sentences_are_decisions_actions_or_neither():
    decided = "What were the final decisions made by the team?"
    assert kind(decided, "The company logo will be incorporated.") == "decisions"
    assert kind("Why did the team decide on rubber?", "It was cheap.") is None
    summary = "Summarize the whole meeting."
    assert kind(summary, "The team decided on a rechargeable one.") == "decisions"
    assert kind(summary, "Marketing would be responsible for market research.") == "action_items"
    assert kind(summary, "Interface developer was asked to work on the design.") == "action_items"
    assert kind(summary, "User Interface pointed out that they should decide soon.") is None
    assert kind(summary, "Kinetic charging will be adopted.") is None
    evidence = {
        "general_query_list": [
            {
                "query": summary,
                "tokenized_answer": ["The team decided on rubber.", "It was a good meeting."],
                "evidence": [[{"turn_index": 2}, {"turn_index": 2}], [{"turn_index": 0}]],
            }
        ],
        "specific_query_list": [
            {
                "query": "What did the group decide?",
                "tokenized_answer": ["The team decided on rubber."],
                "evidence": [[{"turn_index": 2}]],
            }
        ],
    }
    assert annotations(evidence) == {
        "decisions": [{"text": "The team decided on rubber.", "asked": summary, "turns": [2]}],
        "action_items": [],
    }


def test_an_annotation_is_found_by_a_stretch_overlapping_a_turn_it_links_to():
    third = (TURNS[2].start, TURNS[2].end)
    assert found([third], [2], TURNS)
    assert not found([third], [0, 3], TURNS)
    assert not found([third], [99], TURNS)  # a link past the transcript finds nothing
    assert recall([third], [[2], [3], [0, 2]], TURNS) == (2, 3)
    fourth = (TURNS[3].start, TURNS[3].end)
    assert precision([third, fourth, (0.0, 0.1)], [[2], [0]], TURNS) == (2, 3)


def test_turns_become_units_of_one_speaker_each_holding_every_word():
    units = units_of(TURNS)
    assert len(units) > len(TURNS)  # the long turn is cut into several units
    assert all(end - start <= 15.0 for start, end, _, _ in units)
    for start, end, _, speaker in units:
        (turn,) = [t for t in TURNS if t.start <= (start + end) / 2 <= t.end]
        assert speaker == turn.speaker
    said = " ".join(t.text for t in TURNS).split()
    assert " ".join(text for _, _, text, _ in units).split() == said


def test_every_meeting_of_the_series_is_there_with_its_annotations():
    names = [f"{s}{letter}" for group in SERIES.values() for s in group for letter in "abcd"]
    assert len(names) == 32 and not set(SERIES["tuning"]) & set(SERIES["held-out"])
    for name in names:
        with gzip.open(FOLDER / f"{name}.json.gz", "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        turns = len(data["turns"])
        items = data["decisions"] + data["action_items"]
        assert all(0 <= i < turns for item in items for i in item["turns"]), name
    assert (FOLDER / "SOURCE.json").is_file()
