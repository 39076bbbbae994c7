"""A recording's summary without a language model: its own sentences, cited.

The overview is one unit per chapter (the whole stretch when there are no chapters):
the unit that says most of the chapter's title words, its key phrases. Decisions are
units with a decision's words (``we decided``, ``let's go with``, ``agreed``); action
items are units where someone commits someone to do something (``I'll send``, ``you
need to``, ``action item``), with who said it (the speaker label) and, when said, by
when (``by Friday``, ``next meeting``); open questions are units that say a matter is
still open (``we still need to decide``, ``open question``). Each line is the unit's
own text with its label, so every citation points at a stored moment by construction.

Cue phrases are English; other languages get an overview only. The work is a few
regular expressions per unit: milliseconds for an hour of transcript.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_index_video import schema
from llama_index_video.results import Chapter
from llama_index_video.store.lexical import words
from llama_index_video.store.library import TranscriptLine
from llama_index_video.summaries.summary import Summary, SummaryLine

MAX_LINES = 8
"""At most this many decisions, action items or open questions, the first said first."""
DECISION = re.compile(
    r"\b(?:we(?:'ve| have)? decided|(?:we |i )?decided (?:to|on|that)|decision is"
    r"|(?:we(?:'re| are) )?agreed|we agree|let'?s go (?:with|for)"
    r"|we(?:'ll| will)? go (?:with|for)|(?:that|this) (?:settles|decides)|settled on"
    r"|final (?:decision|choice)|we(?:'re| are) going (?:with|for)|so it'?s decided)\b",
    re.IGNORECASE,
)
ACTION = re.compile(
    r"\b(?:action items?"
    r"|(?:i|you|we|he|she|they)(?:'ll| will| are going to| is going to| am going to| need to"
    r"| have to| has to| should)\s+(?:\w+\s+)?(?:send|prepare|check|look|write|make|bring"
    r"|find|work|email|draft|update|get|set|organi[sz]e|call|contact|book|finish|present"
    r"|investigate|review|follow|sort|share|put|ask|arrange|test|fix|do)\b)",
    re.IGNORECASE,
)
DEADLINE = re.compile(
    r"\b(?:by|before|until|for) (?:the )?(?:end of (?:the )?(?:day|week|month)"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight"
    r"|next (?:week|meeting|month|time)|\w+ \d{1,2}(?:st|nd|rd|th)?)\b"
    r"|\b(?:next (?:week|meeting)|tomorrow)\b",
    re.IGNORECASE,
)
OPEN_QUESTION = re.compile(
    r"\b(?:open question|still (?:need|have) to (?:decide|figure|work out|find out)"
    r"|(?:not|haven'?t|hasn'?t) (?:yet )?(?:been )?decided|to be decided"
    r"|(?:don'?t|do not) know yet|remains? to be seen|come back to (?:this|that|it))\b",
    re.IGNORECASE,
)
MIN_WORDS = 4
"""A unit shorter than this ("Okay, agreed.") is no line of its own."""


def extractive_summary(
    source: str, lines: Sequence[TranscriptLine], chapters: Sequence[Chapter]
) -> Summary:
    """The extractive summary of one recording's transcript ``lines`` (in time order),
    its ``chapters`` (possibly none) giving the overview's sections."""
    file_name = source.replace("\\", "/").rsplit("/", 1)[-1]

    def line(
        unit: TranscriptLine, *, owner: str | None = None, by: str | None = None
    ) -> SummaryLine:
        return SummaryLine(
            text=" ".join(unit.text.split()),
            label=schema.moment_label(file_name, unit.start, unit.end),
            start=unit.start,
            end=unit.end,
            speaker=owner,
            by=by,
        )

    long_enough = [u for u in lines if len(u.text.split()) >= MIN_WORDS]
    overview = [line(u) for u in _central(long_enough, chapters)]
    decisions = [line(u) for u in long_enough if DECISION.search(u.text)][:MAX_LINES]
    actions: list[SummaryLine] = []
    for unit in long_enough:
        if ACTION.search(unit.text) and len(actions) < MAX_LINES:
            deadline = DEADLINE.search(unit.text)
            actions.append(line(unit, owner=unit.speaker, by=deadline[0] if deadline else None))
    questions = [line(u) for u in long_enough if OPEN_QUESTION.search(u.text)][:MAX_LINES]
    return Summary(
        source=source,
        extractive=True,
        overview=tuple(overview),
        decisions=tuple(decisions),
        action_items=tuple(actions),
        open_questions=tuple(questions),
    )


def _central(lines: Sequence[TranscriptLine], chapters: Sequence[Chapter]) -> list[TranscriptLine]:
    """Per chapter (or for all ``lines`` without chapters) the unit holding most of the
    chapter's title words; a chapter without such a unit is left out."""
    spans = [(c.start, c.end, c.title) for c in chapters] or [
        (lines[0].start, lines[-1].end, "") if lines else (0.0, 0.0, "")
    ]
    chosen = []
    for start, end, title in spans:
        inside = [u for u in lines if start <= (u.start + u.end) / 2 <= end]
        if not inside:
            continue
        wanted = set(words(title))
        best = max(inside, key=lambda u: (len(wanted & set(words(u.text))), len(u.text)))
        if wanted and not wanted & set(words(best.text)):
            continue
        chosen.append(best)
    return chosen
