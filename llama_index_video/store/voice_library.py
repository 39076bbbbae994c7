"""The voice library: one CAM++ centroid per named voice, in the index folder's ``voices.json``.

``speakers name SOURCE SPEAKER_2 "Diane Lee"`` adds the voice of that label (its units'
speech, :func:`~llama_index_video.speakers.voices.voice_centroids`) under the name, or
updates it (the centroids of every recording named so, weighted by seconds of speech). A
recording ingested afterwards, and one ingested before on ``speakers relabel``, gets each
of its labels whose voice matches a named one at or above the calibrated threshold
named so (:func:`relabel`), in the units whose own voice is near enough to the named one
(:data:`~llama_index_video.speakers.voices.VOICE_UNIT_THRESHOLD`); the other labels and
units stay as they are (unknown).

The file is written whole to a temporary file, flushed to disk and renamed over the old
one, by a caller holding the folder's writer lock, so a crash leaves the old library or
the new one, never a mix. A file that cannot be read is one line naming it (``verify``
reports it as a problem).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video import schema
from llama_index_video.errors import IndexCorruptError, MissingDependencyError, VideoIndexError
from llama_index_video.speakers.base import SPEAKER_PREFIX
from llama_index_video.speakers.campplus import EMBEDDING_SIZE
from llama_index_video.speakers.voices import (
    VOICE_THRESHOLD,
    VOICE_UNIT_THRESHOLD,
    HeardLabel,
    best_voice,
    heard_labels,
    voice_centroids,
)
from llama_index_video.store.collection import chroma_collection
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.speaker_names import rename_speaker

logger = logging.getLogger(__name__)

VOICES_FILE = "voices.json"
MODEL = "campplus"


@dataclass(frozen=True)
class Voice:
    """A named voice: its unit-length centroid and the seconds of speech behind it."""

    centroid: np.ndarray
    seconds: float


class VoiceLibrary:
    """The named voices of the index folder ``folder`` (read on construction)."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / VOICES_FILE
        self.voices: dict[str, Voice] = self._read() if self.path.exists() else {}

    def _read(self) -> dict[str, Voice]:
        try:
            data = json.loads(self.path.read_text())
            if data["model"] != MODEL:
                raise ValueError(f"voices of model {data['model']!r}, not {MODEL!r}")
            voices = {
                str(name): Voice(np.asarray(v["centroid"], dtype=np.float32), float(v["seconds"]))
                for name, v in data["voices"].items()
            }
            if any(v.centroid.shape != (EMBEDDING_SIZE,) for v in voices.values()):
                raise ValueError(f"a centroid is not {EMBEDDING_SIZE} numbers")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise IndexCorruptError(
                f"{self.path}: the voice library cannot be read ({exc}); delete it and "
                "name the voices again"
            ) from exc
        return voices

    def add(self, name: str, centroid: np.ndarray, seconds: float) -> None:
        """Add the voice ``name``, or move it towards ``centroid`` by ``seconds`` of speech."""
        centroid = centroid / np.linalg.norm(centroid)
        old = self.voices.get(name)
        if old is not None:
            centroid = old.centroid * old.seconds + centroid * seconds
            seconds += old.seconds
        self.voices[name] = Voice(centroid / np.linalg.norm(centroid), seconds)

    def rename(self, old: str, new: str) -> None:
        """``old``'s voice (if named) under ``new``, merged with ``new``'s if both exist."""
        voice = self.voices.pop(old, None)
        if voice is not None:
            self.add(new, voice.centroid, voice.seconds)

    def save(self) -> None:
        """Write the library whole, atomically (the caller holds the writer lock)."""
        data = {
            "model": MODEL,
            "threshold": VOICE_THRESHOLD,
            "voices": {
                name: {"seconds": round(v.seconds, 2), "centroid": v.centroid.round(6).tolist()}
                for name, v in sorted(self.voices.items())
            },
        }
        partial = self.path.with_name(f".{self.path.name}.partial")
        with partial.open("w") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, self.path)

    def centroids(self) -> dict[str, np.ndarray]:
        return {name: voice.centroid for name, voice in self.voices.items()}


def speaker_spans(
    store: BasePydanticVectorStore, content_hash: str
) -> dict[str, list[tuple[float, float]]]:
    """Each speaker's (label or name) transcript units of a content as (start, end)."""
    collection = chroma_collection(store)
    rows = (
        collection.get(where={schema.CONTENT_HASH: content_hash}, include=["metadatas"])
        if collection is not None
        else {"metadatas": []}
    )
    spans: dict[str, list[tuple[float, float]]] = {}
    for meta in rows["metadatas"]:
        speaker = meta.get(schema.SPEAKER)
        if speaker and meta.get(schema.MODALITY) == "transcript":
            start, end = float(meta[schema.START_S]), float(meta[schema.END_S])
            spans.setdefault(str(speaker), []).append((start, end))
    return spans


@dataclass(frozen=True)
class HeardRecording:
    """Where an indexed recording's voices are heard: its content, its audio file, the
    audio track ingest heard (from 1), its stored duration (None: probed) and the name
    errors show."""

    content_hash: str
    audio: Path
    shown: str
    track: int = 1
    duration: float | None = None

    def labels(self, spans: dict[str, list[tuple[float, float]]]) -> dict[str, HeardLabel]:
        """:func:`~llama_index_video.speakers.voices.heard_labels` of ``spans`` here."""
        return heard_labels(self.audio, spans, track=self.track, duration=self.duration)


def heard_voice(
    store: BasePydanticVectorStore, recording: HeardRecording, speaker: str
) -> Voice | None:
    """The voice of ``speaker`` (a label or name) from its units' speech in ``recording``;
    None when none of it is heard as speech or CAM++ is not installed (a warning says so)."""
    spans = speaker_spans(store, recording.content_hash).get(speaker, [])
    try:
        centroid = voice_centroids(
            recording.audio,
            {speaker: spans},
            track=recording.track,
            duration=recording.duration,
        ).get(speaker)
    except MissingDependencyError as exc:
        logger.warning("the voice of %s is not kept for other recordings: %s", speaker, exc)
        return None
    if centroid is None:
        return None
    return Voice(centroid, sum(end - start for start, end in spans))


@dataclass
class Relabelled:
    """What :func:`relabel` did: ``{recording: {label: name}}`` for each recording with
    labels, and ``{recording: reason}`` for each it could not read."""

    named: dict[str, dict[str, str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def relabel(
    library: VoiceLibrary,
    store: BasePydanticVectorStore,
    lexical: LexicalStore,
    recordings: Iterable[HeardRecording],
) -> Relabelled:
    """Name each label whose voice matches a named one in ``recordings``, in its units
    whose own voice (none heard: the label's) reaches :data:`VOICE_UNIT_THRESHOLD`
    against it; labels below the threshold and the other units stay (unknown). A
    recording that fails is noted and the others go on."""
    done = Relabelled()
    if not library.voices:
        return done
    known = library.centroids()
    for recording in dict.fromkeys(recordings):
        spans = {
            speaker: found
            for speaker, found in speaker_spans(store, recording.content_hash).items()
            if speaker.startswith(SPEAKER_PREFIX)  # a label: names are never SPEAKER_n
        }
        if not spans:
            continue
        try:
            heard = recording.labels(spans)
        except VideoIndexError as exc:
            done.failed[recording.shown] = str(exc)
            continue
        named = done.named[recording.shown] = {}
        for label, voice in heard.items():
            name = best_voice(voice.voice, known)
            if name is None:
                continue
            kept = voice.near(known[name], VOICE_UNIT_THRESHOLD)
            said = {span for span, keep in zip(spans[label], kept, strict=True) if keep}
            if said:
                rename_speaker(
                    store,
                    lexical,
                    recording.content_hash,
                    label,
                    name,
                    shown=recording.shown,
                    only=said,
                )
                named[label] = name
    return done


def library_problem(folder: Path) -> str:
    """Why the folder's voice library cannot be read, or ``""``."""
    try:
        VoiceLibrary(folder)
    except IndexCorruptError as exc:
        return str(exc)
    return ""
