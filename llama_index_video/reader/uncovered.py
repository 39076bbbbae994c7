"""Speech a subtitle track leaves out: transcribed where the track has no cues.

A subtitle track may cover part of a recording: the first minute of three, a film's
dialogue but not what is said over the credits. Using its cues for the whole file loses
the rest of the speech. So the cues are used where they are, and the sound is heard by
the VAD (:mod:`..transcription.vad`: Silero, about 0.14 CPU s a minute of audio): each
stretch of speech outside the cues (less :data:`COVER_MARGIN` on each side) that holds at
least :data:`MIN_UNCOVERED_SPEECH` seconds of utterances is transcribed, and its segments
join the cues in time order. Silence, music and the pauses between cues are not speech,
so a track that covers all the speech costs the VAD and nothing more.

The margin is small on purpose: on the LibriVox reading a sentence starts 0.5 s after
the cue before it ends, and a margin of 1 s cut its first two words off. Held out on
three other readings (``benchmarks/subtitle_coverage.py --held-out``), 0.25 s keeps as
many of the first uncovered sentence's words as no margin, with the track on time or
0.3 s late; 0.5 s loses some when it is late, 1 s always.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
from llama_index_video.transcription.base import Segment
from llama_index_video.transcription.vad import TRANSCRIPTION, UTTERANCES, VoiceActivity

COVER_MARGIN: Final = 0.25
"""Seconds around a cue that count as covered: a cue's times are a little off its voice's."""
MIN_UNCOVERED_SPEECH: Final = 1.5
"""Seconds of utterances a stretch outside the cues needs to be transcribed (fewer: a
breath, a cue's timing)."""

Span = tuple[float, float]


def covered(cues: Iterable[Segment]) -> list[Span]:
    """The times the cues cover, widened by :data:`COVER_MARGIN`, merged, in order."""
    spans: list[Span] = []
    for start, end in sorted((cue.start - COVER_MARGIN, cue.end + COVER_MARGIN) for cue in cues):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def uncovered_speech(chunk: AudioChunk, cover: Sequence[Span]) -> Iterator[AudioChunk]:
    """The stretches of speech in ``chunk`` that ``cover`` (:func:`covered`) leaves out,
    each holding :data:`MIN_UNCOVERED_SPEECH` seconds of utterances or more, as chunks on
    the source's timeline."""
    activity = VoiceActivity(chunk.samples)
    for first, last in activity.spans(TRANSCRIPTION):
        speech = (chunk.start + first / SAMPLE_RATE, chunk.start + last / SAMPLE_RATE)
        for start, end in _outside(speech, cover):
            a = round((start - chunk.start) * SAMPLE_RATE)
            b = round((end - chunk.start) * SAMPLE_RATE)
            if activity.seconds(UTTERANCES, a / SAMPLE_RATE, b / SAMPLE_RATE) >= (
                MIN_UNCOVERED_SPEECH
            ):
                yield AudioChunk(chunk.start + a / SAMPLE_RATE, chunk.samples[a:b])


def _outside(span: Span, cover: Sequence[Span]) -> Iterator[Span]:
    """The parts of ``span`` outside every span of ``cover`` (in order, merged)."""
    start, end = span
    for a, b in cover:
        if b <= start:
            continue
        if a >= end:
            break
        if a > start:
            yield start, a
        start = max(start, b)
        if start >= end:
            return
    if start < end:
        yield start, end
