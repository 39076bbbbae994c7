"""The transcription contract: a :class:`Transcriber` turns audio into timed :class:`Segment` s.

The speech backends (faster-whisper, openai-whisper) implement the same
protocol, and subtitle loading returns the same :class:`Transcription`, so the
reader never knows which one produced the segments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from llama_index_video.schema import format_timestamp

SAMPLE_RATE = 16_000
"""Samples per second of the audio every :class:`Transcriber` takes."""


@dataclass(frozen=True)
class Word:
    """One recognised word with its time span in seconds."""

    start: float
    end: float
    text: str
    probability: float | None = None


@dataclass(frozen=True)
class Segment:
    """A span of speech (or one subtitle cue) on the source's timeline.

    ``language`` is the Whisper language code it was heard in, when the backend knows
    it per segment (a recording may change language).
    """

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()
    language: str | None = None


@dataclass(frozen=True)
class DroppedSpeech:
    """A stretch of speech a backend left out of its segments, and why (a repetition
    loop that decoding again did not mend, :mod:`.loops`); seconds on the timeline of
    the audio it was given, like its segments'."""

    start: float
    end: float
    reason: str


@dataclass(frozen=True)
class TranscriptionInfo:
    """What a backend actually did: the options used and what it detected."""

    backend: str
    model: str
    language: str | None
    language_probability: float | None = None
    duration: float | None = None
    options: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Transcription:
    """The info at once and the segments lazily, so an hour of audio streams.

    ``dropped`` lists the speech the backend left out; it grows while the segments are
    iterated and is complete once they are consumed.
    """

    info: TranscriptionInfo
    segments: Iterator[Segment]
    dropped: list[DroppedSpeech] = field(default_factory=list)


@dataclass(frozen=True)
class Speech:
    """What was heard in a whole source: segments on its timeline, in time order.

    Attributes:
        segments: Every segment, times in seconds on the source's timeline.
        language: The language heard first (of the first chunk that names one).
        dropped: The speech left out of ``segments``, on the source's timeline.
    """

    segments: tuple[Segment, ...] = ()
    language: str | None = None
    dropped: tuple[DroppedSpeech, ...] = ()

    @classmethod
    def joined(cls, parts: Iterable[Speech]) -> Speech:
        """The speech of consecutive chunks, in order, as one (chunks are timed already)."""
        segments: list[Segment] = []
        dropped: list[DroppedSpeech] = []
        language: str | None = None
        for part in parts:
            segments.extend(part.segments)
            dropped.extend(part.dropped)
            language = language or part.language
        return cls(tuple(segments), language, tuple(dropped))


@runtime_checkable
class Transcriber(Protocol):
    """Anything that turns 16 kHz mono float32 audio into timed segments."""

    @property
    def name(self) -> str:
        """The backend's name, as recorded in :attr:`TranscriptionInfo.backend`."""
        ...

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        """Transcribe ``audio`` (16 kHz mono float32). ``source`` is for error messages."""
        ...


_AUDIO_START: ContextVar[float] = ContextVar("audio_start", default=0.0)
_AUDIO_BEFORE: ContextVar[np.ndarray | None] = ContextVar("audio_before", default=None)


@contextmanager
def audio_from(start: float, *, before: np.ndarray | None = None) -> Iterator[None]:
    """Within it, the audio handed to a transcriber begins ``start`` seconds into its
    source (a chunk of a long recording), so the times its log and error messages name
    (:func:`source_span`) are the source's, as the user sees them in the ingest report;
    ``before`` is the audio just before it (the chunk's lead-in, :func:`audio_before`).

    The segments and dropped spans a transcriber returns stay on the timeline of the
    audio it was given; the caller moves them. A context rather than an argument of
    :meth:`Transcriber.transcribe`, so transcribers written for the protocol keep working.
    """
    token = _AUDIO_START.set(start)
    lead = _AUDIO_BEFORE.set(before)
    try:
        yield
    finally:
        _AUDIO_BEFORE.reset(lead)
        _AUDIO_START.reset(token)


def audio_before() -> np.ndarray | None:
    """The audio just before what a transcriber is given (16 kHz mono float32), when it
    is a chunk of a longer recording (:func:`audio_from`): context only, to hear what was
    said just before (the prompt of faster-whisper's first window); nothing of it is to
    be returned."""
    return _AUDIO_BEFORE.get()


def source_span(start: float, end: float) -> str:
    """``start``-``end`` (seconds of the audio a transcriber was given) as ``mm:ss-mm:ss``
    on the source's timeline (:func:`audio_from`), for messages."""
    offset = _AUDIO_START.get()
    return f"{format_timestamp(start + offset)}-{format_timestamp(end + offset)}"


def as_mono_float32(audio: np.ndarray) -> np.ndarray:
    """Check that ``audio`` is a 1-D array of float samples and return it as float32.

    Raises:
        ValueError: ``audio`` has more than one channel or integer samples (decode with
            :mod:`llama_index_video.media`, which returns 16 kHz mono float32).
    """
    samples = np.asarray(audio)
    if samples.ndim != 1:
        raise ValueError(f"audio must be mono (1-D), got an array of shape {samples.shape}")
    if not np.issubdtype(samples.dtype, np.floating):
        raise ValueError(f"audio must hold float samples in [-1, 1], got dtype {samples.dtype}")
    return samples.astype(np.float32, copy=False)
