"""Speech a window skipped: words the model never wrote, hidden under one long word.

Whisper decodes 30 s windows. Near a window's end ``tiny.en`` sometimes stops writing
mid-sentence and stamps the window's end, and faster-whisper goes on from there; the
words in between are lost, and the word alignment stretches the last word written over
them. On a real 12-minute reading (``benchmarks/long_transcripts.py``, LJ Speech's
reader): "He seems to have taken the letter of the El | his model", where the
reference says "... of the Elzevirs of the seventeenth century for his model", with
"the" lasting 2.2 s; and "used in the | etc.", "the" lasting 2.5 s over "many splendid
missals, psalters". Decoded again alone, the same audio is heard whole.

The model can also go on writing after a skip with no word stretched over it: on an
hour of real speech (three readings joined), "like the C, the A and so on, | and In
short", where the reader said "... and so on, an ugly pear-shaped swelling defacing the
form of the letter: In short", 4.7 s with no word between "on," and "and".

A segment has skipped speech when one of its words lasts more than
:data:`MAX_WORD_SECONDS` (faster-whisper's own bound for a plausible word), or two of its
words are that far apart, over at least :data:`MIN_SKIPPED_SPEECH` seconds of speech (the
VAD's utterances: a word drawn out over a pause, or a pause between two words, is not a
skip). Such a segment is decoded again alone, from its start
to where the next segment starts (at most one window), deterministically, as a loop's
first remedy is (:mod:`.loops`); what that writes replaces the segment when it holds
more words and no loop, otherwise the segment is kept as it was. One more decode per
skip, and none when nothing was skipped.

A window can also end early with no stretched word: the model writes a few sentences,
closes the window and faster-whisper goes on after it, so the rest of the window's speech
is written nowhere. On a real 11-minute recording of meetings and other languages (the
trial of issue 36), ``base`` told Spanish wrote 10 s of a 29 s window (Spanish, then
French) and nothing more, and ``tiny.en`` wrote nothing for 36 s of a meeting (7:23-7:59)
it hears when that stretch is decoded alone. So :func:`heard` decodes again, alone, each
stretch between two segments (or before the first, after the last) that holds at least
:data:`MIN_UNHEARD_SPEECH` seconds of speech, in pieces of one window, in the ways a loop
is (:data:`.loops.REMEDIES`, until one writes words and no loop); what still writes no
words there is listed as dropped with its span, never lost silently.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from llama_index_video.transcription.base import DroppedSpeech, Segment, Word, source_span
from llama_index_video.transcription.loops import REMEDIES, Redecode, loop_reason, word_count

logger = logging.getLogger(__name__)

MAX_WORD_SECONDS: Final = 2.0
MIN_SKIPPED_SPEECH: Final = 1.0
WINDOW_SECONDS: Final = 30.0
"""What is decoded again at most: one Whisper window."""
MIN_UNHEARD_SPEECH: Final = 2.0
"""Seconds of speech (the VAD's utterances) between two segments that are decoded again."""
MAX_AGAINS: Final = 3
"""Decodes of one window's unheard speech at most: each starts after what the last wrote."""
UNHEARD: Final = (
    "the model wrote nothing usable there (no words, or a repetition loop), also when decoded again"
)

SpeechSeconds = Callable[[float, float], float]
"""Seconds of speech heard between two times of the segments' timeline."""


def stretched_word(segment: Segment, speech: SpeechSeconds) -> Word | None:
    """The first word of ``segment`` that lasts too long over speech, or the first
    stretch between two of its words that does (as a word with no text), or None."""
    gaps = (Word(a.end, b.start, "") for a, b in itertools.pairwise(segment.words))
    for word in sorted([*segment.words, *gaps], key=lambda word: word.start):
        if (
            word.end - word.start > MAX_WORD_SECONDS
            and speech(word.start, word.end) >= MIN_SKIPPED_SPEECH
        ):
            return word
    return None


def filled(
    segments: Iterable[Segment],
    *,
    until: float,
    speech: SpeechSeconds,
    redecode: Redecode,
    where: str,
) -> Iterator[Segment]:
    """``segments`` with each that skipped speech replaced by what decoding it again
    alone writes, when that holds more words (see the module docstring); the decoded
    audio ends at ``until``."""
    skipped: tuple[Segment, Word] | None = None
    for segment in segments:
        if skipped is not None:
            yield from _again(*skipped, segment.start, redecode, where)
            skipped = None
        word = stretched_word(segment, speech)
        if word is None:
            yield segment
        else:
            skipped = (segment, word)
    if skipped is not None:
        yield from _again(*skipped, until, redecode, where)


def _again(
    segment: Segment, word: Word, following: float, redecode: Redecode, where: str
) -> list[Segment]:
    """``segment`` decoded again up to ``following`` (one window at most), if that
    writes more words and no loop; else ``segment``."""
    end = min(max(segment.end, following), segment.start + WINDOW_SECONDS)
    heard = list(redecode(segment.start, end, REMEDIES[0]))
    if any(loop_reason(s) is not None for s in heard) or word_count(heard) <= word_count([segment]):
        return [segment]
    logger.info(
        "%s: decoded %s again (alone): %s %.1f s over speech the window had skipped; "
        "%d words, before %d",
        where,
        source_span(segment.start, end),
        f"{word.text!r} lasted" if word.text else "no word written for",
        word.end - word.start,
        word_count(heard),
        word_count([segment]),
    )
    return heard


def heard(
    segments: Iterable[Segment],
    *,
    since: float,
    until: float,
    speech: SpeechSeconds,
    redecode: Redecode,
    where: str,
    into: list[DroppedSpeech],
) -> Iterator[Segment]:
    """``segments`` (of audio decoded from ``since`` to ``until``) with the speech no
    segment covers decoded again alone; what still writes no words is appended to
    ``into`` (see the module docstring)."""
    covered = since
    for segment in segments:
        yield from _unheard(covered, segment.start, speech, redecode, where, into)
        yield segment
        covered = max(covered, segment.end)
    yield from _unheard(covered, until, speech, redecode, where, into)


def _unheard(
    start: float,
    end: float,
    speech: SpeechSeconds,
    redecode: Redecode,
    where: str,
    into: list[DroppedSpeech],
) -> Iterator[Segment]:
    """What decoding ``start``-``end`` again writes, one window at a time, while a
    window's rest after what the last decode wrote still holds speech (at most
    :data:`MAX_AGAINS` decodes a window); a rest where nothing is written goes to
    ``into``. A stretch already in ``into`` (a loop) is left."""
    if any(d.start < end and d.end > start for d in into):
        return
    for index in range(math.ceil((end - start) / WINDOW_SECONDS)):
        at = start + index * WINDOW_SECONDS
        last = min(end, at + WINDOW_SECONDS)
        for _ in range(MAX_AGAINS):
            spoken = speech(at, last)
            if spoken < MIN_UNHEARD_SPEECH:
                break
            found = _written(at, last, redecode)
            span = source_span(at, last)
            logger.info(
                "%s: decoded %s again (alone): %.1f s of speech no segment covered; %d words",
                where,
                span,
                spoken,
                word_count(found),
            )
            if not found:
                logger.warning(
                    "%s: %.1f s of speech at %s left out of the transcript: %s",
                    where,
                    spoken,
                    span,
                    UNHEARD,
                )
                into.append(DroppedSpeech(at, last, UNHEARD))
                break
            yield from found
            at = max(segment.end for segment in found)


def _written(start: float, end: float, redecode: Redecode) -> list[Segment]:
    """What the first of :data:`.loops.REMEDIES` that writes words without a loop writes
    for ``start``-``end``; none when none does."""
    for remedy in REMEDIES:
        found = [
            segment
            for a, b in remedy.pieces(start, end)
            for segment in redecode(a, b, remedy)
            if loop_reason(segment) is None
        ]
        if found:
            return found
    return []
