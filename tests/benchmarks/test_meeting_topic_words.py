"""The topic-word table's counts, on a QMSum-shaped checkout of one meeting."""

from __future__ import annotations

import json

from benchmarks.meeting_topic_words import counts


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
