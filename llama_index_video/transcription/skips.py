"""Speech a window skipped: words the model never wrote, hidden under one long word.

Whisper decodes 30 s windows. Near a window's end ``tiny.en`` sometimes stops writing
mid-sentence and stamps the window's end, and faster-whisper goes on from there; the
words in between are lost, and the word alignment stretches the last word written over
them. On a real 12-minute reading (``benchmarks/long_transcripts.py``, LJ Speech's
reader): "He seems to have taken the letter of the El | his model", where the
reference says "... of the Elzevirs of the seventeenth century for his model", with
"the" lasting 2.2 s; and "used in the | etc.", "the" lasting 2.5 s over "many splendid
missals, psalters". Decoded again alone, the same audio is heard whole.

A segment has skipped speech when one of its words lasts more than
:data:`MAX_WORD_SECONDS` (faster-whisper's own bound for a plausible word) over at
least :data:`MIN_SKIPPED_SPEECH` seconds of speech (the VAD's utterances: a word drawn
out over a pause is not a skip). Such a segment is decoded again alone, from its start
to where the next segment starts (at most one window), deterministically, as a loop's
first remedy is (:mod:`.loops`); what that writes replaces the segment when it holds
more words and no loop, otherwise the segment is kept as it was. One more decode per
skip, and none when nothing was skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from llama_index_video.schema import format_timestamp
from llama_index_video.transcription.base import Segment, Word
from llama_index_video.transcription.loops import REMEDIES, Redecode, loop_reason

logger = logging.getLogger(__name__)

MAX_WORD_SECONDS: Final = 2.0
MIN_SKIPPED_SPEECH: Final = 1.0
WINDOW_SECONDS: Final = 30.0
"""What is decoded again at most: one Whisper window."""

SpeechSeconds = Callable[[float, float], float]
"""Seconds of speech heard between two times of the segments' timeline."""


def stretched_word(segment: Segment, speech: SpeechSeconds) -> Word | None:
    """The first word of ``segment`` that lasts too long over speech, or None."""
    for word in segment.words:
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
    if any(loop_reason(s) is not None for s in heard) or _words(heard) <= _words([segment]):
        return [segment]
    logger.info(
        "%s: decoded %s-%s again (alone): %r lasted %.1f s over speech the window had "
        "skipped; %d words, before %d",
        where,
        format_timestamp(segment.start),
        format_timestamp(end),
        word.text,
        word.end - word.start,
        _words(heard),
        _words([segment]),
    )
    return heard


def _words(segments: Iterable[Segment]) -> int:
    return sum(len(segment.text.split()) for segment in segments)
