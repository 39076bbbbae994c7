"""Where the speech is: Silero VAD, the one place it is heard, at any grain.

Three steps need to know where the speech is, each at its own grain:

- the transcription drops what is not speech, as faster-whisper's ``vad_filter`` does
  with its default options (:data:`TRANSCRIPTION`: a pause of 2 s or more ends a
  stretch of speech, kept with 400 ms on each side);
- the language check (:mod:`.language`) hears utterances, split at short pauses
  (:data:`UTTERANCES`: 300 ms, 100 ms kept);
- speaker labels (:mod:`llama_index_video.speakers.campplus_diarizer`) hear stretches
  of speech from a lower probability (:data:`TURNS`).

Every grain comes from the same speech probabilities, one per 32 ms of audio; only how
those are turned into spans differs. Silero costs about 0.14 CPU s per minute of audio
(2-core AMD EPYC), so :func:`speech_probabilities` hears each audio once (a
transcription's grains share it), each silence after speech a second time from its own
start (a quiet voice after louder speech was heard as silence in one pass), and
:func:`speech_spans` cuts the spans at any grain. :func:`speech_spans` is
faster-whisper's ``get_speech_timestamps`` with no limit on an utterance's length (no
grain sets one), and gives exactly its spans from one pass (:func:`silero_pass`; tested
against it on the fixtures): speech starts at the first window heard at the grain's
threshold or more, and ends where it fell under that threshold less 0.15 for at least
the grain's pause.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Final

import numpy as np

from llama_index_video.transcription.base import SAMPLE_RATE

WINDOW: Final = 512
"""Samples per speech probability (Silero at 16 kHz)."""

Span = tuple[int, int]
"""``(start, end)`` sample indices."""


@dataclass(frozen=True)
class Grain:
    """How speech probabilities become spans: pauses that end an utterance, padding, and
    the probability from which audio is speech (it stops being speech under this less
    0.15, as in faster-whisper)."""

    min_pause_ms: int
    pad_ms: int
    threshold: float = 0.5


TRANSCRIPTION: Final = Grain(min_pause_ms=2000, pad_ms=400)
"""faster-whisper's default ``VadOptions``: what its ``vad_filter`` keeps."""
UTTERANCES: Final = Grain(min_pause_ms=300, pad_ms=100)
"""Utterances split at short pauses, for the language check."""
TURNS: Final = Grain(min_pause_ms=150, pad_ms=30, threshold=0.2)
"""Stretches of speech for speaker labels: far-field and phone speech scores low, and
turns last 0.5-4 s (:mod:`llama_index_video.speakers.campplus_diarizer`)."""
RESTART_AFTER_S: Final = 2.0
"""A silence after speech this long or longer is heard again from its start
(:func:`speech_probabilities`): the pause that ends a stretch of speech
(:data:`TRANSCRIPTION`), not fitted."""
FRESH_FOR_S: Final = 10.0
"""A silence is heard again in pieces this long, each from a fresh state: Silero's state
wears down in a long silence. Speech after 10, 20, 60 and 180 s of digital silence scored
0.5 or more in 53, 47, 39 and 23 % of its windows (57 % after 2 s); after -50 dBFS noise,
53, 52, 24 and 23 % (a real German FLEURS reading, ``tests/fixtures/real_languages``)."""
MIN_FOUND_S: Final = 0.5
"""Speech a silence's second hearing finds counts only when it runs on this long (a
word or more; a chord's attack after silence scored one window of 32 ms as speech)."""


class VoiceActivity:
    """Where the speech is in some audio, at any grain: Silero hears it once, when first
    asked."""

    def __init__(self, samples: np.ndarray) -> None:
        self.samples = samples
        self._spans: dict[Grain, list[Span]] = {}

    @cached_property
    def probabilities(self) -> np.ndarray:
        return speech_probabilities(self.samples)

    def spans(self, grain: Grain) -> list[Span]:
        return speech_spans(self.probabilities, len(self.samples), grain)

    def seconds(self, grain: Grain, start: float, end: float) -> float:
        """Seconds of speech at ``grain`` between ``start`` and ``end`` seconds."""
        if grain not in self._spans:
            self._spans[grain] = self.spans(grain)
        first, last = start * SAMPLE_RATE, end * SAMPLE_RATE
        found = sum(max(0.0, min(last, b) - max(first, a)) for a, b in self._spans[grain])
        return found / SAMPLE_RATE


def speech_probabilities(samples: np.ndarray) -> np.ndarray:
    """Silero's probability of speech for each :data:`WINDOW` of ``samples`` (16 kHz),
    each silence (after speech, or at the start) heard again from its start
    (:func:`silences`), in pieces of :data:`FRESH_FOR_S`.

    Silero carries its state through one pass, so what it makes of quiet speech depends
    on what came before: a real reading at -62 dBFS, 3 s after louder speech, scored
    under 0.5 but for 1.6 s of its 10.2 s in one pass over the whole file, and as speech
    from 68.6 s to its end when the pass started in the silence before it. Each silence
    is heard a second time from its own start, and where that hearing finds speech
    running on for :data:`MIN_FOUND_S` or more its probabilities are taken where the
    first pass heard no speech; nothing else changes. A shorter find is not taken (the
    first chord of music after a silence was speech to a fresh state for one window),
    nor one within the padding the transcription keeps around speech anyway
    (:data:`TRANSCRIPTION`'s 400 ms) at either end of the silence: a fresh state there
    hears the tail of the speech before, or the onset of the speech after, a window or a
    few early, which would move span edges (and so the windows the model is given) for
    nothing new.

    A long silence wears the state down too: a French reading after 3 minutes of digital
    silence was not speech in one pass (no warning: the transcript just began with its
    second sentence; a new user's trial), and a meeting recorder started a minute before
    anyone speaks hears room noise first. So a silence is heard again in pieces of
    :data:`FRESH_FOR_S`, each from a fresh state, on into the speech after it for
    :data:`FRESH_FOR_S` (the worn state hears it as speech only here and there), and a
    silence that starts the audio is heard again as one after speech is. A sample is
    heard again once for each silence that ends within :data:`FRESH_FOR_S` before it:
    Silero costs about 0.14 CPU s per minute of audio, so even every sample heard five
    times costs little beside transcribing it.
    """
    heard = silero_pass(samples)
    edge = math.ceil(SAMPLE_RATE * TRANSCRIPTION.pad_ms / 1000 / WINDOW)
    piece = math.ceil(FRESH_FOR_S * SAMPLE_RATE / WINDOW)
    for first, last in silences(heard):
        if last - first <= 2 * edge:
            continue
        stop = min(last + piece, len(heard))
        again = np.concatenate(
            [
                silero_pass(samples[start * WINDOW : end * WINDOW])[: end - start]
                for start in range(first, stop, piece)
                for end in [min(start + piece, stop)]
            ]
        )[edge:]
        inner = slice(first + edge, stop)
        missed = _long_runs(again >= TRANSCRIPTION.threshold) & (
            heard[inner] < TRANSCRIPTION.threshold
        )
        missed[last - edge - first - edge : last - first - edge] = False  # the onset's padding
        heard[inner] = np.where(missed, again, heard[inner])
    return heard


def _long_runs(speech: np.ndarray) -> np.ndarray:
    """``speech`` where it runs on for :data:`MIN_FOUND_S` or more."""
    least = math.ceil(MIN_FOUND_S * SAMPLE_RATE / WINDOW)
    kept = np.zeros(len(speech), bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], speech.astype(np.int8), [0]])))
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        if end - start >= least:
            kept[start:end] = True
    return kept


def silences(probabilities: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` window indices of each stretch under the speech threshold
    (:data:`TRANSCRIPTION`'s) that lasts :data:`RESTART_AFTER_S` or more and follows
    speech or starts the audio: where Silero is heard afresh."""
    least = math.ceil(RESTART_AFTER_S * SAMPLE_RATE / WINDOW)
    speech = probabilities >= TRANSCRIPTION.threshold
    found: list[tuple[int, int]] = []
    first: int | None = None
    for index, heard in enumerate([*speech.tolist(), True]):
        if not heard:
            first = index if first is None else first
            continue
        if first is not None and index - first >= least:
            found.append((first, min(index, len(probabilities))))
        first = None
    return found


def silero_pass(samples: np.ndarray) -> np.ndarray:
    """One pass of Silero over ``samples``, from a fresh state."""
    from faster_whisper.vad import get_vad_model

    padded = np.pad(samples, (0, WINDOW - len(samples) % WINDOW))
    return np.asarray(get_vad_model()(padded), dtype=np.float32).reshape(-1)


def speech_spans(probabilities: np.ndarray, length: int, grain: Grain) -> list[Span]:
    """The spans of speech in audio of ``length`` samples, at ``grain``.

    Args:
        probabilities: :func:`speech_probabilities` of that audio.
        length: Its number of samples.
        grain: Which pauses end an utterance, and the padding kept around each.
    """
    min_pause = SAMPLE_RATE * grain.min_pause_ms / 1000
    silent = max(grain.threshold - 0.15, 0.01)
    found: list[list[int]] = []
    start: int | None = None
    pause_from = 0  # where the current pause began; 0 while there is none
    for index, probability in enumerate(probabilities):
        at = WINDOW * index
        if probability >= grain.threshold:
            pause_from = 0
            if start is None:
                start = at
            continue
        if start is None or probability >= silent:
            continue
        if not pause_from:
            pause_from = at
        if at - pause_from >= min_pause:
            found.append([start, pause_from])
            start, pause_from = None, 0
    if start is not None and length > start:
        found.append([start, length])
    return _padded(found, length, SAMPLE_RATE * grain.pad_ms / 1000)


def _padded(found: list[list[int]], length: int, pad: float) -> list[Span]:
    """Each span widened by ``pad`` samples; a pause shorter than two pads is shared
    half-and-half between its neighbours (as faster-whisper pads)."""
    for index, span in enumerate(found):
        if index == 0:
            span[0] = int(max(0, span[0] - pad))
        if index == len(found) - 1:
            span[1] = int(min(length, span[1] + pad))
            continue
        following = found[index + 1]
        pause = following[0] - span[1]
        if pause < 2 * pad:
            span[1] += int(pause // 2)
            following[0] = int(max(0, following[0] - pause // 2))
        else:
            span[1] = int(min(length, span[1] + pad))
            following[0] = int(max(0, following[0] - pad))
    return [(start, end) for start, end in found]
