"""The extractive summary's decisions and action items as meetings say them.

Real meetings rarely say "we decided": a group picks something ("so we're gonna go for
the yellow one", "let's just say rubber"), and work is handed out as a request ("could
you look into the chips?"). Lines are the units matching most cues, in the order said.
"""

from __future__ import annotations

from llama_index_video.store.library import TranscriptLine
from llama_index_video.summaries.extractive import MAX_LINES, extractive_summary

PICKED = "Okay so we're gonna go for the yellow rubber case then."
ASKED = "Could you look into what the advanced chip costs?"
MEETING = [
    TranscriptLine(0.0, 6.0, "Welcome everyone, this is the conceptual design meeting.", "A"),
    TranscriptLine(7.0, 12.0, "The case could be plastic, rubber or even wood.", "B"),
    TranscriptLine(13.0, 18.0, PICKED, "A"),
    TranscriptLine(19.0, 24.0, ASKED, "A"),
    TranscriptLine(25.0, 30.0, "Marketing found that people like fruit colours.", "C"),
]


def test_a_choice_and_a_request_are_a_decision_and_an_action_item():
    summary = extractive_summary("meeting.wav", MEETING, [])
    assert [line.text for line in summary.decisions] == [PICKED]
    assert [(line.text, line.start, line.speaker) for line in summary.action_items] == [
        (ASKED, 19.0, "A")
    ]


def test_only_the_surest_lines_are_kept_in_the_order_said():
    filler = [
        TranscriptLine(100.0 + 10 * i, 105.0 + 10 * i, f"So we'll have part {i} in it.", "B")
        for i in range(MAX_LINES + 3)
    ]
    sure = TranscriptLine(400.0, 408.0, "Okay, so we decided to go for the rubber case.", "A")
    summary = extractive_summary("meeting.wav", [*filler, sure], [])
    assert len(summary.decisions) == MAX_LINES
    assert sure.text in [line.text for line in summary.decisions]
    starts = [line.start for line in summary.decisions]
    assert starts == sorted(starts)
