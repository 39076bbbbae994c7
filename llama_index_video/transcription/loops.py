"""Repetition loops: text a speech model wrote that must never be indexed.

Decoding at a single temperature of 0 (deterministic, see :mod:`.faster`) turns off
Whisper's own remedy, re-decoding a window at a higher temperature when its text
compresses too well or is too improbable. A model then sometimes repeats one phrase
until the window ends ("we are going to have a great day and we are going to have a
great day and ...", ``tiny.en`` on 9 s of Spanish), with most words squeezed to zero
length. Re-decoding by sampling would make the same file give other text (and other
node ids) from one run to the next, so such a segment's audio is decoded again in
deterministic ways first (:data:`REMEDIES`: alone, in a fresh 30 s window with no
earlier text; then with repeats penalised; then in shorter windows), and only what
still loops is dropped, and reported with its time span.

A segment is a loop when its own text compresses by more than
:data:`MAX_COMPRESSION_RATIO` (Whisper's threshold, applied per segment rather than per
30 s window, so the good sentences beside a loop survive; English segments measure
0.9-1.6 on the example media, loops 6-18), or when at least half of its words (of
:data:`MIN_WORDS` or more) last no time at all.

A few words of text are too short for zlib to find a loop in ("the pyramids, the
pyramids, the pyramids," compresses 1.7 times): :func:`repeats_a_phrase` finds one there.
:func:`text_loops` applies both to the language check's short writings
(:mod:`.language`), where a loop must not pass for fluent text.

A loop can also run across segments, each too short to loop on its own: a prompted
decoding (:mod:`.faster_decoding`) hands "Thank you." on from one window to the next in
place of what was said (:func:`ends_a_run`).
"""

from __future__ import annotations

import logging
import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from llama_index_video.transcription.base import DroppedSpeech, Segment, source_span

logger = logging.getLogger(__name__)

MAX_COMPRESSION_RATIO: Final = 2.4
MIN_WORDS: Final = 8
PHRASE_REPEATS: Final = 3
MAX_PHRASE_WORDS: Final = 4
RUN_SEGMENTS: Final = 3
"""Segments in a row saying one same text that make a run (:func:`ends_a_run`)."""


@dataclass(frozen=True, kw_only=True)
class Remedy:
    """One deterministic way to decode a loop's audio again.

    Attributes:
        name: What it does, for the log.
        window: Decode pieces of at most this many seconds (None: the span at once).
        repetition_penalty: Whisper's penalty on tokens already written (1: none).
        no_repeat_ngram_size: Never write the same run of this many tokens twice (0: off).
    """

    name: str
    window: float | None = None
    repetition_penalty: float = 1.0
    no_repeat_ngram_size: int = 0

    def pieces(self, start: float, end: float) -> Iterator[tuple[float, float]]:
        """``start``-``end`` in equal consecutive pieces no longer than ``window``."""
        count = 1 if self.window is None else max(1, math.ceil((end - start) / self.window))
        step = (end - start) / count
        for index in range(count):
            yield start + index * step, end if index == count - 1 else start + (index + 1) * step


REMEDIES: Final = (
    Remedy(name="alone"),
    Remedy(name="repeats penalised", repetition_penalty=1.3, no_repeat_ngram_size=4),
    Remedy(name="10 s windows", window=10.0, repetition_penalty=1.3, no_repeat_ngram_size=4),
)
"""Tried in order on a loop's audio until one writes no loop."""
MIN_REDECODE_SECONDS: Final = 0.5
"""A loop written over less audio than this is not decoded again alone (see :func:`mended`)."""
WIDEN_SECONDS: Final = 5.0
"""How far back a loop too short to decode alone is widened (:func:`mended`)."""

_WORD = re.compile(r"\w+")


def compression_ratio(text: str) -> float:
    """Bytes of ``text`` per byte of its zlib compression, as Whisper computes it."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def loop_reason(segment: Segment) -> str | None:
    """Why ``segment`` looks like a repetition loop, or None when it does not."""
    ratio = compression_ratio(segment.text)
    if ratio > MAX_COMPRESSION_RATIO:
        return f"its text repeats itself (compression ratio {ratio:.1f})"
    instant = sum(1 for word in segment.words if word.end <= word.start)
    if len(segment.words) >= MIN_WORDS and 2 * instant >= len(segment.words):
        return f"{instant} of its {len(segment.words)} words last no time"
    return None


Redecode = Callable[[float, float, Remedy], Iterable[Segment]]
"""Decodes the audio from ``start`` to ``end`` seconds again with a remedy; segments on
the same timeline as the loop's."""


def mend(
    loop: Segment,
    reason: str,
    redecode: Redecode,
    *,
    where: str,
    model: str,
    into: list[DroppedSpeech],
) -> list[Segment]:
    """What ``loop`` (a repetition loop, for ``reason``) said, decoded again by the first
    of :data:`REMEDIES` that writes no loop; when each still loops somewhere, what the
    last one wrote without a loop, with the spans that still loop logged and appended
    to ``into``. ``where`` and ``model`` name the audio and the model in the log."""
    kept: list[Segment] = []
    looping = [(loop.start, loop.end)]
    if loop.end - loop.start >= MIN_REDECODE_SECONDS:
        for remedy in REMEDIES:
            kept, looping = [], []
            for start, end in remedy.pieces(loop.start, loop.end):
                for segment in redecode(start, end, remedy):
                    if loop_reason(segment) is None:
                        kept.append(segment)
                    else:
                        looping.append((segment.start, segment.end))
            if not looping:
                logger.info(
                    "%s: decoded %s again (%s): model %r had written a repetition loop (%s)",
                    where,
                    source_span(loop.start, loop.end),
                    remedy.name,
                    model,
                    reason,
                )
                return kept
    for start, end in looping:
        logger.warning(
            "%s: dropped what model %r wrote for %s, a repetition loop (%s), also when "
            "decoded again",
            where,
            model,
            source_span(start, end),
            reason,
        )
        into.append(DroppedSpeech(start, end, reason))
    return kept


def mended(
    segments: Iterable[Segment],
    *,
    since: float = 0.0,
    until: float,
    mend: Callable[[Segment, str], list[Segment]],
) -> Iterator[Segment]:
    """``segments`` with each repetition loop replaced by what ``mend`` makes of it.

    A loop's own end time understates the audio it ate: the model writes no closing
    timestamp and goes on from the end of its 30 s window (on ``sales_es.ogg`` a loop
    stamped 0.0-4.1 s swallowed speech up to 9.7 s). So ``mend`` gets the loop lasting
    up to the next segment's start, or ``until`` (where the decoded audio ends).

    A loop over less than :data:`MIN_REDECODE_SECONDS` of audio is too short to hear
    anything in, and the words it stands for may sit before it: on the synthetic
    20-minute recording (``benchmarks/long_transcripts.py``) a loop stamped 0.4 s came
    after "every Tuesday." while "The grammar society rehearses", said before that, was
    written nowhere. Such a loop is widened back to :data:`WIDEN_SECONDS` (not before
    ``since``, where the decoded audio starts), taking in whole the segments written
    there, and ``mend`` decodes all of it again; what it writes replaces them when it
    holds at least as many words, else the loop alone is mended as before (dropped).
    Segments are held back for :data:`WIDEN_SECONDS` for that.
    """
    held: list[Segment] = []
    loop: tuple[Segment, str] | None = None
    for segment in segments:
        if loop is not None:
            ate = replace(loop[0], end=max(loop[0].end, segment.start))
            held = _mend_held(held, ate, loop[1], since=since, mend=mend)
            loop = None
        reason = loop_reason(segment)
        if reason is None:
            held.append(segment)
        else:
            loop = (segment, reason)
        while held and held[0].end <= segment.start - WIDEN_SECONDS:  # no loop reaches it
            yield held.pop(0)
    if loop is not None:
        ate = replace(loop[0], end=max(loop[0].end, until))
        held = _mend_held(held, ate, loop[1], since=since, mend=mend)
    yield from held


def _mend_held(
    held: list[Segment],
    loop: Segment,
    reason: str,
    *,
    since: float,
    mend: Callable[[Segment, str], list[Segment]],
) -> list[Segment]:
    """``held`` (the segments before ``loop``) and what ``mend`` makes of ``loop``,
    widened back over them when it is too short (see :func:`mended`)."""
    if loop.end - loop.start >= MIN_REDECODE_SECONDS:
        return held + mend(loop, reason)
    start = max(since, loop.end - WIDEN_SECONDS)
    first = len(held)
    while first and held[first - 1].end > start:
        first -= 1
    around = held[first:]
    if around:
        start = min(start, around[0].start)
    again = mend(replace(loop, start=start), reason)
    if word_count(again) >= word_count(around):
        return held[:first] + again
    return held + mend(loop, reason)


def word_count(segments: Iterable[Segment]) -> int:
    """The words ``segments`` wrote (as the text splits)."""
    return sum(len(segment.text.split()) for segment in segments)


def ends_a_run(said: Sequence[str]) -> bool:
    """Whether the last :data:`RUN_SEGMENTS` of ``said`` (the texts of segments written in
    a row) say one same text, case and punctuation aside: a loop across segments. On a
    trial meeting's M4A, ``tiny.en`` prompted with its own "Thank you." wrote it 112 times
    in place of a reader's sentences. Such segments are kept (a person may say "Yeah."
    three times), but the prompt that carries the run restarts after them."""
    last = [tuple(_WORD.findall(text.casefold())) for text in said[-RUN_SEGMENTS:]]
    return len(last) == RUN_SEGMENTS and bool(last[0]) and len(set(last)) == 1


def text_loops(text: str) -> bool:
    """Whether a short text a model wrote is a loop: it compresses too well, or it
    repeats a phrase (:func:`repeats_a_phrase`)."""
    return compression_ratio(text) > MAX_COMPRESSION_RATIO or repeats_a_phrase(text)


def repeats_a_phrase(text: str) -> bool:
    """Whether ``text`` says a phrase of two or more different words (up to
    :data:`MAX_PHRASE_WORDS`) :data:`PHRASE_REPEATS` times in a row, case and punctuation
    aside. A word said again and again ("no, no, no") is left to the compression ratio:
    people say that."""
    words = _WORD.findall(text.casefold())
    for size in range(2, MAX_PHRASE_WORDS + 1):
        span = size * PHRASE_REPEATS
        for start in range(len(words) - span + 1):
            phrase = words[start : start + size]
            if len(set(phrase)) > 1 and all(
                words[start + size * k : start + size * (k + 1)] == phrase
                for k in range(1, PHRASE_REPEATS)
            ):
                return True
    return False
