"""Repetition loops: text a speech model wrote that must never be indexed.

Decoding at a single temperature of 0 (deterministic, see :mod:`.faster`) turns off
Whisper's own remedy, re-decoding a window at a higher temperature when its text
compresses too well or is too improbable. A model then sometimes repeats one phrase
until the window ends ("we are going to have a great day and we are going to have a
great day and ...", ``tiny.en`` on 9 s of Spanish), with most words squeezed to zero
length. Such a segment is dropped and reported instead: re-decoding by sampling would
make the same file give other text (and other node ids) from one run to the next.

A segment is a loop when its own text compresses by more than
:data:`MAX_COMPRESSION_RATIO` (Whisper's threshold, applied per segment rather than per
30 s window, so the good sentences beside a loop survive; English segments measure
0.9-1.6 on the example media, loops 6-18), or when at least half of its words (of
:data:`MIN_WORDS` or more) last no time at all.

A few words of text are too short for zlib to find a loop in ("the pyramids, the
pyramids, the pyramids," compresses 1.7 times): :func:`repeats_a_phrase` finds one there.
:func:`text_loops` applies both to the language check's short writings
(:mod:`.language`), where a loop must not pass for fluent text.
"""

from __future__ import annotations

import re
import zlib
from typing import Final

from llama_index_video.transcription.base import Segment

MAX_COMPRESSION_RATIO: Final = 2.4
MIN_WORDS: Final = 8
PHRASE_REPEATS: Final = 3
MAX_PHRASE_WORDS: Final = 4

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
