"""The extractive summary's decisions and action items as meetings say them.

Real meetings rarely say "we decided": a group picks something ("so we're gonna go for
the yellow one", "let's just say rubber"), and work is handed out as a request ("could
you look into the chips?"). Lines are the units matching most cues, in the order said.
"""

from __future__ import annotations

from llama_index_video.store.library import TranscriptLine
from llama_index_video.summaries.extractive import (
    MAX_LINES,
    NOT_A_CONVERSATION,
    extractive_summary,
    is_conversation,
)

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


def test_an_aim_to_settle_something_is_no_decision_but_settling_on_one_is():
    aim = "I want to dig into your love of metal and settle some age-old debates."
    settled = "Right, we settled on the yellow rubber case for the remote."
    talk = [*MEETING[:2], TranscriptLine(13.0, 18.0, aim, "A"), *MEETING[3:]]
    assert [line.text for line in extractive_summary("show.mp3", talk, []).decisions] == []
    talk[2] = TranscriptLine(13.0, 18.0, settled, "A")
    assert [line.text for line in extractive_summary("show.mp3", talk, []).decisions] == [settled]


def test_only_the_surest_lines_are_kept_in_the_order_said():
    filler = [
        TranscriptLine(
            100.0 + 10 * i, 105.0 + 10 * i, f"So we'll have part {i} in it.", "BC"[i % 2]
        )
        for i in range(MAX_LINES + 3)
    ]
    sure = TranscriptLine(400.0, 408.0, "Okay, so we decided to go for the rubber case.", "A")
    summary = extractive_summary("meeting.wav", [*filler, sure], [])
    assert len(summary.decisions) == MAX_LINES
    assert sure.text in [line.text for line in summary.decisions]
    starts = [line.start for line in summary.decisions]
    assert starts == sorted(starts)


# A lecture's asides, as the loose cues read them: a choice ("let's make", "so we're going
# to go for"), a conclusion ("so we'll have a look"), something "agreed" by nobody here.
ASIDES = [
    "The benchmark they used was to say, let's make systems that operate like humans do.",
    "So let's say we've learned this and then we move onto the next task.",
    "So we're going to go for a quick tour of the architectures out there.",
    "So we'll have a look at the memory systems next, and then the results.",
    "It is generally agreed that working memory holds only a few items at once.",
    "So it's a whole research field that crosses neuroscience and psychology.",
    "Could you look at the second figure, it shows the power law of practice.",
]
DECIDED = "After the last lecture we decided to move the exam to the last week."
SEND = "I'll send the slides to everyone by Friday."


def _lecture(*said: str, speaker: str | None = None) -> list[TranscriptLine]:
    return [TranscriptLine(10.0 * i, 10.0 * i + 8, text, speaker) for i, text in enumerate(said)]


def test_a_lecture_lists_no_asides_only_what_it_states_and_says_why():
    """One voice (labelled or not): the loose cues found 6 "decisions" and an "action
    item" in these asides; only a stated decision and work given with a when remain."""
    for speaker in (None, "SPEAKER_1"):
        asides = extractive_summary("lecture.mp4", _lecture(*ASIDES, speaker=speaker), [])
        assert asides.decisions == asides.action_items == ()
        assert asides.note == NOT_A_CONVERSATION and NOT_A_CONVERSATION in asides.to_text()
        stated = extractive_summary(
            "lecture.mp4", _lecture(*ASIDES, DECIDED, SEND, speaker=speaker), []
        )
        assert [line.text for line in stated.decisions] == [DECIDED]
        assert [(line.text, line.by) for line in stated.action_items] == [(SEND, "by Friday")]
    plain = extractive_summary("lecture.mp4", _lecture("The weather was mild today."), [])
    assert plain.note is None  # nothing was left out


def test_a_conversation_is_voices_besides_the_main_one_saying_a_tenth_together():
    assert is_conversation(MEETING)
    questions = [*_lecture(*ASIDES * 3, speaker="A"), TranscriptLine(300.0, 304.0, "Why?", "B")]
    assert not is_conversation(questions)  # a question from the room: still a lecture
    # A hearing: the minister answers, eight members each ask one question (4.5 % each).
    asked = [TranscriptLine(400.0 + i, 401.0 + i, "And the budget?", f"M{i}") for i in range(8)]
    assert is_conversation([*_lecture(*ASIDES * 2, speaker="minister"), *asked])
    assert not is_conversation(_lecture(*ASIDES))  # no labels
    # Without labels: listeners' "yeah" (AMI meetings say it 7-65 times in 1,000 words).
    chat = [*ASIDES, "Yeah, yeah.", "Yep, okay.", "Mm-hmm, yeah that works.", "Yeah."]
    assert is_conversation(_lecture(*chat))
    listed = extractive_summary("meeting.wav", _lecture(*chat), [])
    assert len(listed.decisions) == 6 and listed.note is None  # every cue, as in a meeting
