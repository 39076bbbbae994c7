"""Scoring for the decisions benchmark: pure functions, unit-tested in tests/benchmarks.

A meeting's turns become transcript units as ingest makes them from subtitles (each turn
one timed cue of its speaker, regrouped by :func:`llama_index_video.reader.units.build_units`),
and an annotated decision or action item is a set of turns (the dialogue its annotator
linked it to). An annotation is **found** when a listed summary line cites a stretch
that overlaps one of its turns (:func:`found`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from benchmarks.meeting_scoring import Turn, overlaps


def units_of(turns: Sequence[Turn]) -> list[tuple[float, float, str, str | None]]:
    """``(start, end, text, speaker)`` of the transcript units ingest would store for
    ``turns`` read as subtitle cues, a change of speaker ending a unit."""
    from llama_index_video.reader.units import build_units
    from llama_index_video.transcription.base import Segment

    spoken = [t for t in turns if t.text.strip()]
    starts = [t.start for t in spoken]

    def speaker_at(start: float, end: float) -> str | None:
        at = bisect.bisect_right(starts, (start + end) / 2) - 1
        return spoken[at].speaker if at >= 0 else None

    segments = [Segment(t.start, t.end, t.text) for t in spoken]
    return [
        (u.start, u.end, u.text, u.speaker) for u in build_units(segments, speaker_at=speaker_at)
    ]


def found(
    cited: Sequence[tuple[float, float]], linked: Sequence[int], turns: Sequence[Turn]
) -> bool:
    """Whether one of the ``cited`` stretches overlaps a turn of ``linked`` (indices)."""
    spans = [(turns[i].start, turns[i].end) for i in linked if 0 <= i < len(turns)]
    return any(overlaps(start, end, spans) for start, end in cited)


def recall(
    cited: Sequence[tuple[float, float]],
    annotated: Sequence[Sequence[int]],
    turns: Sequence[Turn],
) -> tuple[int, int]:
    """How many of the ``annotated`` items (each its linked turns) the ``cited`` stretches
    find, of how many."""
    return sum(found(cited, linked, turns) for linked in annotated), len(annotated)


def precision(
    cited: Sequence[tuple[float, float]],
    annotated: Sequence[Sequence[int]],
    turns: Sequence[Turn],
) -> tuple[int, int]:
    """How many ``cited`` stretches overlap a turn of some annotated item, of how many."""
    linked = sorted({i for item in annotated for i in item})
    return sum(found([stretch], linked, turns) for stretch in cited), len(cited)
