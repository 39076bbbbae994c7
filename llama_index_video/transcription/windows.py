"""Where Whisper's 30 s windows end: in a pause, never inside a word.

faster-whisper decodes its input 30 s at a time, from wherever the previous window's
text ended. A window that ends inside a word often loses it: the model stops before
the cut word and stamps the window's end, and the next window starts after it. On a
real 12-minute reading (LJ Speech's reader, ``benchmarks/long_transcripts.py``) with
windows every 30 s: "suitable for the | process" ("machine" lost), "revived Caslon's |
printing" ("founts" lost), "the transition | of Subiaco" ("type" lost).

:func:`clip_timestamps` cuts the audio the model is given (the VAD's stretches of
speech joined end to end, :mod:`.vad`) into clips that end in pauses (the middle of a
gap between two utterances, or where two stretches were joined), each as long as fits
in one window; faster-whisper never lets a window run past a clip's end. Where the
speech does not pause for a whole window, the clip runs to the next pause and
faster-whisper windows it as before. The clips cover all of the audio, so nothing is
left out that was decoded before.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Final

from llama_index_video.transcription.base import SAMPLE_RATE
from llama_index_video.transcription.vad import Span

WINDOW_SECONDS: Final = 30.0


def clip_timestamps(kept: Sequence[Span], utterances: Sequence[Span]) -> list[float]:
    """Clips of the audio made of ``kept`` joined end to end, as faster-whisper's flat
    ``clip_timestamps`` (``[start, end, start, end, ...]`` in seconds of that audio).

    Args:
        kept: The spans of the source joined into the audio the model hears (samples).
        utterances: The source's utterances (samples), split at short pauses.
    """
    cuts: list[int] = []
    offset = 0
    for start, end in kept:
        inside = [(a, b) for a, b in utterances if a < end and b > start]
        for (_, before), (after, _) in itertools.pairwise(inside):
            middle = (max(before, start) + min(after, end)) // 2
            if start < middle < end:
                cuts.append(offset + middle - start)
        offset += end - start
        cuts.append(offset)
    cuts = sorted(set(cuts))
    window = round(WINDOW_SECONDS * SAMPLE_RATE)
    clips: list[float] = []
    at = 0
    while at < offset:  # each clip ends at a later cut; the last cut is the end
        first_after = bisect.bisect_right(cuts, at)
        fits = bisect.bisect_right(cuts, at + window) - 1
        end = cuts[fits] if fits >= first_after else cuts[first_after]
        clips += [at / SAMPLE_RATE, end / SAMPLE_RATE]
        at = end
    return clips
