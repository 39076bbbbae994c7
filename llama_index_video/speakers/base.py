"""The diarization contract: a :class:`Diarizer` says who spoke when, as :class:`SpeakerTurn` s.

Backends (CAM++ and Resemblyzer offline, pyannote-audio with a model-hub token)
implement the same protocol; the reader only sees turns, and gives each recognised
word the speaker of the turn it falls in. Window-based backends share
:func:`cut_stretches` and :func:`merge_pieces` to turn window labels into turns.
Speakers are named ``SPEAKER_1``, ``SPEAKER_2``, ... in the order they first speak, so
a label is stable within one file (and means nothing across files: diarization does
not identify people; ``llama-index-video speakers name`` gives a label a person's name,
:mod:`llama_index_video.store.speaker_names`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from llama_index_video.errors import DiarizationError, VideoIndexError

if TYPE_CHECKING:
    import numpy as np

    from llama_index_video.media.audio import AudioChunk

SPEAKER_PREFIX = "SPEAKER_"
# Consecutive pieces of one speaker closer than this (seconds) form one turn.
MERGE_GAP_S = 0.5
# A word up to this far from every turn still goes to the nearest one: VAD trims
# speech edges, and subtitle or ASR word times are a little loose.
MAX_DISTANCE_S = 1.0


@dataclass(frozen=True)
class SpeakerTurn:
    """``speaker`` talked from ``start`` to ``end`` seconds on the source's timeline."""

    start: float
    end: float
    speaker: str


@runtime_checkable
class Diarizer(Protocol):
    """Anything that tells who spoke when in 16 kHz mono audio."""

    @property
    def name(self) -> str:
        """The backend's name, for notes and errors."""
        ...

    def diarize(
        self, chunks: Iterable[AudioChunk], *, source: Path | None = None
    ) -> list[SpeakerTurn]:
        """Turns of the audio given as consecutive chunks; ``source`` is for error messages."""
        ...


def check_speaker_counts(
    num_speakers: int | None, max_speakers: int | None, threads: int = 1
) -> None:
    """Refuse a speaker count, a speaker limit or a thread count under one."""
    if num_speakers is not None and num_speakers < 1:
        raise ValueError(f"num_speakers must be >= 1, got {num_speakers}")
    if max_speakers is not None and max_speakers < 1:
        raise ValueError(f"max_speakers must be >= 1, got {max_speakers}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")


@contextmanager
def failures_named(backend: str, source: Path | None) -> Iterator[None]:
    """A backend failing deep inside (torch, onnxruntime, librosa) as one
    :class:`~llama_index_video.errors.DiarizationError` naming the file and the backend;
    the package's own errors pass through unchanged."""
    try:
        yield
    except VideoIndexError:
        raise
    except Exception as exc:
        where = f"{source}: " if source else ""
        raise DiarizationError(f"{where}{backend} failed ({type(exc).__name__}: {exc})") from exc


def speaker_name(number: int) -> str:
    """``SPEAKER_1`` for 1."""
    return f"{SPEAKER_PREFIX}{number}"


def speaker_order(who: str) -> tuple[int, int, str]:
    """A sort key listing labels by number (``SPEAKER_2`` before ``SPEAKER_10``), then
    names alphabetically."""
    number = who[len(SPEAKER_PREFIX) :]
    if who.startswith(SPEAKER_PREFIX) and number.isdigit():
        return (0, int(number), "")
    return (1, 0, who.casefold())


def speaker_label(text: str) -> str:
    """``"2"`` and ``"speaker_2"`` -> ``"SPEAKER_2"``; anything else is a name given to a
    speaker (``llama-index-video speakers name``), kept as written but for its spaces."""
    tidy = " ".join(text.split())
    if tidy.isdigit():
        return speaker_name(int(tidy))
    if tidy.upper().startswith(SPEAKER_PREFIX) and tidy[len(SPEAKER_PREFIX) :].isdigit():
        return tidy.upper()
    return tidy


def parse_speakers(text: str) -> list[str]:
    """``"2, SPEAKER_3, Diane Lee"`` -> ``["SPEAKER_2", "SPEAKER_3", "Diane Lee"]``.

    Raises:
        ValueError: no speaker is given.
    """
    names = [speaker_label(s) for s in text.split(",") if s.strip()]
    if not names:
        raise ValueError("name speakers as SPEAKER_2, 2 or a name given to one, comma-separated")
    return names


def as_known(requested: Sequence[str], known: Iterable[str]) -> list[str]:
    """``requested`` speakers spelled as the index spells them (``known``): a person's
    name is theirs in any case ("diane" asks for "Diane", as a question naming her does);
    a speaker the index does not know stays as it was asked for."""
    spelled = {name.casefold(): name for name in known}
    return [spelled.get(name.casefold(), name) for name in requested]


def unknown_speakers(requested: Sequence[str], known: Iterable[str]) -> str | None:
    """Why a search for what ``requested`` said can find nothing, given the index's
    speakers (``known``): no speaker labels at all, or speakers it does not have, as one
    line naming the ones it has; None when it knows every one."""
    names = sorted(set(known), key=speaker_order)
    if not names:
        return "this index has no speaker labels (they are made by 'ingest --speakers')"
    spelled = {name.casefold() for name in names}
    missing = [name for name in requested if name.casefold() not in spelled]
    if not missing:
        return None
    return (
        f"no moment of this index was said by {', '.join(map(repr, missing))}; "
        f"its speakers: {', '.join(names)}"
    )


def name_in_order(turns: Iterable[tuple[float, float, object]]) -> list[SpeakerTurn]:
    """Turns with the backend's cluster ids renamed ``SPEAKER_n`` by first appearance."""
    names: dict[object, str] = {}
    named = []
    for start, end, cluster in sorted(turns, key=lambda turn: (turn[0], turn[1])):
        if end <= start:
            continue
        name = names.setdefault(cluster, speaker_name(len(names) + 1))
        named.append(SpeakerTurn(round(start, 3), round(end, 3), name))
    return named


Stretch = tuple[float, float, int, int]
"""A stretch of speech ``(start, end)`` and the range ``[first, last)`` of its windows."""


def cut_stretches(
    stretches: Iterable[Stretch], centres: Sequence[float], labels: Sequence[int] | np.ndarray
) -> Iterator[tuple[float, float, int]]:
    """Each stretch cut half-way between the centres of consecutive windows of two speakers.

    ``centres[i]`` and ``labels[i]`` are window ``i``'s centre time and cluster.
    """
    for start, end, first, last in stretches:
        piece_start = start
        for i in range(first, last - 1):
            if labels[i] != labels[i + 1]:
                cut = min(max((centres[i] + centres[i + 1]) / 2, piece_start), end)
                yield piece_start, cut, int(labels[i])
                piece_start = cut
        yield piece_start, end, int(labels[last - 1])


def merge_pieces(
    pieces: Iterable[tuple[float, float, int]], *, gap: float = MERGE_GAP_S
) -> list[tuple[float, float, int]]:
    """Consecutive pieces of one cluster less than ``gap`` seconds apart joined into one."""
    merged: list[tuple[float, float, int]] = []
    for start, end, label in pieces:
        if merged and merged[-1][2] == label and start - merged[-1][1] <= gap:
            merged[-1] = (merged[-1][0], end, label)
        else:
            merged.append((start, end, label))
    return merged


class SpeakerTimeline:
    """Looks up who was speaking during a span of time."""

    def __init__(self, turns: Sequence[SpeakerTurn]) -> None:
        self._turns = sorted(turns, key=lambda t: t.start)
        self._starts = [t.start for t in self._turns]

    @property
    def speakers(self) -> list[str]:
        """The speakers heard, in order of first appearance."""
        return list(dict.fromkeys(t.speaker for t in self._turns))

    def speaker_at(self, start: float, end: float) -> str | None:
        """The speaker of the turn overlapping ``[start, end]`` most, else the nearest one.

        None when no turn lies within ``MAX_DISTANCE_S``.
        """
        if not self._turns:
            return None
        middle = (start + end) / 2
        at = bisect.bisect_right(self._starts, middle)
        nearby = self._turns[max(0, at - 3) : at + 3]

        def overlap(turn: SpeakerTurn) -> float:
            return max(0.0, min(end, turn.end) - max(start, turn.start))

        def distance(turn: SpeakerTurn) -> float:
            return max(turn.start - middle, middle - turn.end, 0.0)

        best = max(nearby, key=lambda t: (overlap(t), -distance(t)))
        if overlap(best) == 0 and distance(best) > MAX_DISTANCE_S:
            return None
        return best.speaker
