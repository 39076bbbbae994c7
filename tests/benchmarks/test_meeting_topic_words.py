"""The topic-word table: its counts on a QMSum-shaped checkout of one meeting, and the
shipped table."""

from __future__ import annotations

import json

from benchmarks.meeting_scoring import MEETING_PARTS
from benchmarks.meeting_topic_words import TABLE, counts


def test_a_word_counts_as_named_when_the_chapters_topic_holds_it(tmp_path):
    folder = tmp_path / "data" / "ALL" / "train"
    folder.mkdir(parents=True)
    turn = "The budget for the remote is twelve euros and the budget review is on Friday. " * 5
    meeting = {
        "topic_list": [{"topic": "Budget discussion", "relevant_text_span": [["0", "7"]]}],
        "specific_query_list": [],
        "meeting_transcripts": [{"speaker": "A", "content": turn} for _ in range(8)],
    }
    (folder / "m1.json").write_text(json.dumps(meeting), encoding="utf-8")
    said, named = counts(folder)
    assert said["budget"] == said["remote"] == 1  # one chapter says both
    assert named["budget"] == 1 and named["remote"] == 0


def test_the_shipped_table_holds_no_name_of_a_meetings_part():
    # As the generator writes it: the scoring leaves these words out of every topic.
    rows = TABLE.read_text(encoding="utf-8").splitlines()[1:]
    parts = [word for word, *_ in map(str.split, rows) if word.removesuffix("s") in MEETING_PARTS]
    assert parts == []
