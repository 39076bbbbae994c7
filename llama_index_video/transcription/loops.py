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
"""

from __future__ import annotations

import zlib
from typing import Final

from llama_index_video.transcription.base import Segment

MAX_COMPRESSION_RATIO: Final = 2.4
MIN_WORDS: Final = 8


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
