"""A recording's summary without a language model: its own sentences, cited.

The overview is one unit per chapter (the whole stretch when there are no chapters):
the unit that says most of the chapter's title words, its key phrases. Decisions are
units with a decision's words (``we decided``, ``let's go with``, ``agreed``) or the ways
a group says it picks something (``we're gonna go for``, ``so we'll``); action items are
units where someone commits someone to do something (``I'll send``, ``could you look
into``, ``for next meeting``), with who said it (the speaker label) and, when said, by
when (``by Friday``, ``next meeting``). Of each kind the units matching most cue families
are kept (:data:`MAX_LINES`), listed in the order said: on real meetings these loose
cues find many more units than a summary should list. Open
questions are units that say a matter is still open (``we still need to decide``,
``open question``). Each line is the unit's own text with its label, so every citation
points at a stored moment by construction.

Only a conversation (:func:`is_conversation`: voices besides the main one, as ``ingest
--speakers`` labels them; without labels, talk full of listeners' "yeah") is read with
every cue. In a lecture, a narration or a reading, a decision must be stated as one (:data:`STATED`:
"we decided", "let's go with") and an action item must say by when ("I'll send the
quotes by Friday"): the loose cues listed a speaker's chatter there ("so we'll look at
the next slide"), and such a summary says it found none.

Cue phrases are English; other languages get an overview only. The work is a few
regular expressions per unit: milliseconds for an hour of transcript.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from llama_index_video import schema
from llama_index_video.results import Chapter
from llama_index_video.store.library import TranscriptLine
from llama_index_video.store.tokens import words
from llama_index_video.summaries.summary import Summary, SummaryLine

MAX_LINES = 12
"""At most this many decisions or action items: those matching most cues, listed in the
order they were said (and at most this many open questions, the first said first)."""
DECISION = re.compile(
    r"\b(?:we(?:'ve| have)? decided|(?:we |i )?decided (?:to|on|that)|decision is"
    r"|(?:we(?:'re| are) )?agreed|we agree|let'?s go (?:with|for)"
    r"|we(?:'ll| will)? go (?:with|for)|(?:that|this) (?:settles|decides)|settled on"
    r"|final (?:decision|choice)|we(?:'re| are) going (?:with|for)|so it'?s decided)\b",
    re.IGNORECASE,
)
DECIDING = re.compile(
    r"\b(?:decid(?:e|ed|ing)|decisions?|agree(?:d|s)?|votes?|voting|consensus|settled"
    r"|final|conclu(?:de|ded|sion))\b",
    re.IGNORECASE,
)
"""The words of deciding, wherever they stand ("Decisions. Let's vote.")."""
CHOOSING = re.compile(
    r"\b(?:we(?:'re| are)? (?:gonna|going to) (?:go|have|use|make|put|stick|need|do)"
    r"|go(?:ing)? (?:for|with)|we'?ll (?:go|have|use|make|put|stick)"
    r"|let'?s (?:go|have|use|make|put|say|stick|keep|vote|just|do)"
    r"|we (?:should|could|can) (?:go|have|use|make|put|stick))\b",
    re.IGNORECASE,
)
"""What a group says as it picks something ("we're gonna have", "let's go for")."""
SO_WE = re.compile(
    r"\bso (?:we|it)(?:'ll|'re| will| are| should| need| have| can)\b", re.IGNORECASE
)
"""A conclusion drawn ("so we'll", "so it's ...")."""
WRAPPING_UP = re.compile(
    r"^(?:okay|ok|alright|right|so)\b.*\b(?:we|it|that)(?:'ll|'re| will| is| are|'s) ",
    re.IGNORECASE,
)
"""A statement that opens by closing the talk before it ("Okay, so we'll ...")."""
DECISION_CUES = (DECISION, DECIDING, CHOOSING, SO_WE, WRAPPING_UP)
"""A unit is a decision by these; the more it matches, the surer (chosen on the tuning
meetings of ``benchmarks/decisions.py``)."""
ACTION = re.compile(
    r"\b(?:action items?"
    r"|(?:i|you|we|he|she|they)(?:'ll| will| are going to| is going to| am going to| need to"
    r"| have to| has to| should)\s+(?:\w+\s+)?(?:send|prepare|check|look|write|make|bring"
    r"|find|work|email|draft|update|get|set|organi[sz]e|call|contact|book|finish|present"
    r"|investigate|review|follow|sort|share|put|ask|arrange|test|fix|do)\b)",
    re.IGNORECASE,
)
ASKED_TO = re.compile(
    r"\b(?:(?:you|i)(?:'ll| will| can| could| should| need to| have to)|can you|could you"
    r"|(?:i'm|you're|we're|he's|she's|they're) gonna)\s+(?:\w+\s+)?(?:look|do|send|prepare"
    r"|work|check|find|come up|make|bring|think|present|get|research|write|draw|email"
    r"|investigate)\b",
    re.IGNORECASE,
)
"""Someone asked, or saying they will, do something ("you could look into", "I'm gonna
check")."""
FOLLOW_UP = re.compile(
    r"\b(?:next meeting|next time|homework|assignments?|individual (?:work|actions?)"
    r"|to-?do list)\b",
    re.IGNORECASE,
)
"""Work for after the meeting."""
ACTION_CUES = (ACTION, ASKED_TO, FOLLOW_UP)
"""A unit is an action item by these, as :data:`DECISION_CUES` a decision."""
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
STATED = re.compile(
    r"\b(?:we(?:'ve| have| all)? (?:decided|agreed|settled on|chose|voted)"
    r"|we(?:'re| are) (?:agreed|going with)|let'?s go with|we(?:'ll| will) go with"
    r"|(?:that|this) (?:settles|decides)|so it'?s decided|(?:our|the) final decision)\b",
    re.IGNORECASE,
)
"""A decision stated as one: a group as the subject of a deciding verb ("we decided",
"let's go with", "that settles it"); what a recording that is no conversation must say
for a line of it to be a decision (:func:`is_conversation`)."""
NOT_A_CONVERSATION = (
    "read as one voice, not a conversation: only decisions stated as such and work given "
    "with a when are listed; ingest a meeting with --speakers to read it as one"
)
"""The summary's note when that left lines out (:func:`is_conversation`)."""
MIN_SPEAKER_SHARE = 0.1
"""A conversation has voices besides its main speaker's that say this share of its
units together: a committee's members each ask a few questions (on 15 of the 36 Welsh and
Canadian parliament hearings of QMSum, no second voice says a tenth alone), a lecture's
room asks one or two."""
ASSENT = re.compile(r"\b(?:yeah|yep|yup|mm-?hmm|uh-huh)\b", re.IGNORECASE)
"""What a listener says while another talks; no reading or narration says it."""
MIN_ASSENT_RATE = 3.0
"""Without speaker labels, a conversation says :data:`ASSENT` at least this often per
1,000 words (and :data:`MIN_ASSENTS` times): the 32 AMI meetings of
``benchmarks/decisions.py`` say it 7.2-64.7 times, readings and the example narrations
never (``benchmarks/decision_gate.py``). Held out: ICSI's meetings 8.1-33.9, podcast
conversations transcribed verbatim 3.2-21.2, lightly edited 0.7-10.5 (4 of 12 under
the bar); parliament hearings' edited records and one-voice podcasts never."""
MIN_ASSENTS = 5


def is_conversation(lines: Sequence[TranscriptLine]) -> bool:
    """Whether ``lines`` are a conversation (a meeting, a call, a hearing): voices
    besides the main speaker's that say :data:`MIN_SPEAKER_SHARE` of the units together;
    without speaker labels, talk full of listeners' "yeah" (:data:`MIN_ASSENT_RATE`). A
    lecture (a question or two from the room included), a narration or a reading is not."""
    counts = Counter(unit.speaker for unit in lines if unit.speaker)
    if counts:
        others = sum(counts.values()) - max(counts.values())
        return others > 0 and others >= MIN_SPEAKER_SHARE * len(lines)
    said = sum(len(unit.text.split()) for unit in lines)
    assents = sum(len(ASSENT.findall(unit.text)) for unit in lines)
    return assents >= MIN_ASSENTS and assents * 1000 >= MIN_ASSENT_RATE * said


def _stated_decision(unit: TranscriptLine) -> bool:
    return bool(STATED.search(unit.text)) and not unit.text.rstrip().endswith("?")


def _assigned_work(unit: TranscriptLine) -> bool:
    """Work given with a subject, a verb and a when ("I'll send the quotes by Friday")."""
    return bool(ACTION.search(unit.text)) and bool(
        DEADLINE.search(unit.text) or FOLLOW_UP.search(unit.text)
    )


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
    talk = is_conversation(lines)
    # Outside a conversation the loose cues ("so we'll", "let's have") are a speaker's
    # chatter ("so we'll look at the next slide"): only stated decisions and work given
    # with a when count there.
    decided = long_enough if talk else [u for u in long_enough if _stated_decision(u)]
    assigned = long_enough if talk else [u for u in long_enough if _assigned_work(u)]
    decisions = [line(u) for u in _surest(decided, DECISION_CUES)]
    actions = []
    chosen = _surest(assigned, ACTION_CUES)
    loose = len(_surest(long_enough, DECISION_CUES)) + len(_surest(long_enough, ACTION_CUES))
    passed_over = not talk and len(decisions) + len(chosen) < loose
    for unit in chosen:
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
        note=NOT_A_CONVERSATION if passed_over else None,
    )


def _surest(
    lines: Sequence[TranscriptLine], cues: Sequence[re.Pattern[str]]
) -> list[TranscriptLine]:
    """The :data:`MAX_LINES` units of ``lines`` matching most ``cues`` (the longer first
    among equals), in their own order; a unit matching none is never one."""
    matched = [(sum(bool(c.search(u.text)) for c in cues), at) for at, u in enumerate(lines)]
    ranked = sorted(
        ((n, at) for n, at in matched if n),
        key=lambda pair: (-pair[0], -len(lines[pair[1]].text.split()), pair[1]),
    )
    return [lines[at] for at in sorted(at for _, at in ranked[:MAX_LINES])]


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
