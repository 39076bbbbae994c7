"""The voice library: one CAM++ centroid per named voice, in the index folder's ``voices.json``.

``speakers name SOURCE SPEAKER_2 "Diane Lee"`` keeps the voice of the recording's units
so named (their speech, :func:`~llama_index_video.speakers.voices.heard_labels`) under
the name, in place of what it kept of that recording before; the voice of a name is that
of every recording named so, weighted by seconds of speech. Renaming (``speakers name
SOURCE "Diane Lee" "Diane Lee-Park"``) moves the whole voice to the new name: one voice,
called by the new name from then on. A
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video import schema
from llama_index_video.errors import IndexCorruptError, MissingDependencyError, VideoIndexError
from llama_index_video.speakers.base import SPEAKER_PREFIX
from llama_index_video.speakers.campplus import EMBEDDING_SIZE
from llama_index_video.speakers.voices import (
    VOICE_NAMED_SECONDS,
    VOICE_THRESHOLD,
    VOICE_UNIT_THRESHOLD,
    HeardLabel,
    best_voice,
    heard_labels,
    spread_units,
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


def merged(voices: Iterable[Voice]) -> Voice:
    """One voice of ``voices``: their centroids weighted by their seconds of speech."""
    voices = list(voices)
    seconds = np.array([v.seconds for v in voices])
    total = seconds @ np.stack([v.centroid for v in voices])
    return Voice(total / np.linalg.norm(total), float(seconds.sum()))


class VoiceLibrary:
    """The named voices of the index folder ``folder`` (read on construction).

    A voice is kept as the voices of the recordings it was named in, one per recording
    (its content hash; ``""``: a library written before they were kept apart), so naming
    it again in a recording replaces that recording's voice instead of adding it twice.
    """

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / VOICES_FILE
        self.heard: dict[str, dict[str, Voice]] = self._read() if self.path.exists() else {}

    @property
    def voices(self) -> dict[str, Voice]:
        """Each name's voice, from all the recordings it was named in."""
        return {name: merged(recordings.values()) for name, recordings in self.heard.items()}

    def _read(self) -> dict[str, dict[str, Voice]]:
        try:
            data = json.loads(self.path.read_text())
            if data["model"] != MODEL:
                raise ValueError(f"voices of model {data['model']!r}, not {MODEL!r}")
            heard = {
                str(name): {
                    str(recording): _voice(r)
                    for recording, r in v.get("recordings", {"": v}).items()
                }
                for name, v in data["voices"].items()
            }
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise IndexCorruptError(
                f"{self.path}: the voice library cannot be read ({exc}); delete it and "
                "name the voices again"
            ) from exc
        return heard

    def hear(self, name: str, recording: str, voice: Voice) -> None:
        """``voice`` as ``name``'s in ``recording`` (a content hash), in place of what was."""
        self.heard.setdefault(name, {})[recording] = merged([voice])

    def rename(self, old: str, new: str) -> None:
        """``old``'s voice (if named) under ``new``, merged with ``new``'s if both exist."""
        for recording, voice in self.heard.pop(old, {}).items():
            kept = self.heard.get(new, {}).get(recording)
            self.hear(new, recording, voice if kept is None else merged([voice, kept]))

    def save(self) -> None:
        """Write the library whole, atomically (the caller holds the writer lock). Each
        name keeps its whole voice too, as versions before per-recording voices read it."""
        voices = self.voices
        data = {
            "model": MODEL,
            "threshold": VOICE_THRESHOLD,
            "voices": {
                name: {
                    **_written(voices[name]),
                    "recordings": {r: _written(v) for r, v in sorted(recordings.items())},
                }
                for name, recordings in sorted(self.heard.items())
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


def _voice(stored: dict[str, object]) -> Voice:
    centroid = np.asarray(stored["centroid"], dtype=np.float32)
    if centroid.shape != (EMBEDDING_SIZE,):
        raise ValueError(f"a centroid is not {EMBEDDING_SIZE} numbers")
    return Voice(centroid, float(stored["seconds"]))  # type: ignore[arg-type]


def _written(voice: Voice) -> dict[str, object]:
    return {"seconds": round(voice.seconds, 2), "centroid": voice.centroid.round(6).tolist()}


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
    audio track ingest heard (from 1), its stored duration (None: probed), whether ingest
    heard its two channels one at a time (:mod:`~llama_index_video.reader.channels`) and
    the name errors show."""

    content_hash: str
    audio: Path
    shown: str
    track: int = 1
    duration: float | None = None
    by_channel: bool = False

    def labels(self, spans: Mapping[str, Sequence[tuple[float, float]]]) -> dict[str, HeardLabel]:
        """:func:`~llama_index_video.speakers.voices.heard_labels` of ``spans`` here, each
        speaker of a recording heard by channel on the channel it was heard on."""
        channels = None
        if self.by_channel:
            from llama_index_video.reader.channels import heard_channels

            channels = heard_channels(self.audio, spans, track=self.track, duration=self.duration)
        return heard_labels(
            self.audio, spans, track=self.track, duration=self.duration, channels=channels
        )


def heard_voice(
    store: BasePydanticVectorStore, recording: HeardRecording, *speakers: str
) -> Voice | None:
    """The voice of the units of ``speakers`` (labels or names) in ``recording``, as one,
    heard in some of its units (:data:`~llama_index_video.speakers.voices.VOICE_NAMED_SECONDS`);
    None when none of it is heard as speech or CAM++ is not installed (a warning says so)."""
    said = speaker_spans(store, recording.content_hash)
    every = [span for speaker in speakers for span in said.get(speaker, [])]
    spans = spread_units(every, VOICE_NAMED_SECONDS)
    try:
        heard = recording.labels({speakers[0]: spans}).get(speakers[0])
    except MissingDependencyError as exc:
        logger.warning("the voice of %s is not kept for other recordings: %s", speakers[0], exc)
        return None
    if heard is None:
        return None
    return Voice(heard.voice, sum(end - start for start, end in spans))


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
