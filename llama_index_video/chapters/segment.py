"""Where a recording's topic changes: embedding-based topic segmentation, no model call.

The transcript units of a recording are already embedded at ingest; this module reads
their vectors as a TextTiling-style sequence (Hearst 1997, with embeddings in place of
word counts). At each gap between two units it compares what was said in the
:data:`WINDOW_SECONDS` before with what was said in the same time after (cosine of the
two blocks' mean vectors). A topic change is a valley of that similarity: its *depth*
is how far it falls below the highest similarity on each side within a window. A
pause before the next unit deepens a gap a little (people stop before a new item).
The deepest gaps become boundaries, deepest first, as long as they stand out
(:data:`DEPTH_CUT` standard deviations above the mean depth) and every chapter stays
at least :data:`MIN_CHAPTER_SECONDS` long.

Windows are in seconds, not units, so the same settings fit long monologue units and
short meeting turns. The work is a few vector means per gap: milliseconds for an hour.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_RECORDING_SECONDS = 180.0
"""Recordings shorter than this get no chapters: there is little to navigate."""
MIN_CHAPTER_SECONDS = 180.0
"""No chapter is shorter than this (boundaries closer together are not kept)."""
WINDOW_SECONDS = 150.0
"""How much speech on each side of a gap is compared."""
PEAK_SECONDS = 240.0
"""How far on each side of a gap its depth looks for the highest similarity."""
PAUSE_WEIGHT = 0.04
"""Depth added by a pause of :data:`LONG_PAUSE_SECONDS` or more before the next unit."""
LONG_PAUSE_SECONDS = 5.0
DEPTH_CUT = 1.0
"""A boundary's depth is at least the mean depth plus this many standard deviations."""
SPEAKER_WEIGHT = 0.3
"""The share of a gap's similarity that is who spoke, against what was said."""
CUE_WEIGHT = 0.3
"""Depth added before a unit that announces a new item (:data:`CUE`)."""
CUE = re.compile(
    r"\b(?:mov(?:e|ing) on|next (?:item|point|presentation|thing|topic|question|one|meeting)"
    r"|(?:your|my|the|first) presentation|agenda|turn(?:ing)? to|go first"
    r"|let'?s (?:get started|start|begin|talk|discuss|go)"
    r"|(?:first|second|third|last|final|other) (?:item|point|question|thing|topic)s?"
    r"|questions? (?:now )?(?:from|on)|any (?:more |other )?questions)\b",
    re.IGNORECASE,
)
MIN_UNITS = 6
"""Fewer transcript units than this get no chapters."""


@dataclass(frozen=True)
class TimedVector:
    """One transcript unit as segmentation sees it: its span, its embedding, who said it
    (``""`` without speaker labels) and what."""

    start: float
    end: float
    vector: Sequence[float]
    speaker: str = ""
    text: str = ""


def worth_chapters(spans: Sequence[tuple[float, float]]) -> bool:
    """Whether units of these spans (in time order) are enough to chapter: at least
    :data:`MIN_UNITS` of them over :data:`MIN_RECORDING_SECONDS` or more."""
    return len(spans) >= MIN_UNITS and spans[-1][1] - spans[0][0] >= MIN_RECORDING_SECONDS


def chapter_starts(units: Sequence[TimedVector]) -> list[int]:
    """Indexes of the units that begin a chapter, in order; ``[0, ...]`` or ``[]``.

    ``units`` are in time order. ``[]`` when they are not :func:`worth_chapters`;
    ``[0]`` when no topic change stands out.
    """
    if not worth_chapters([(u.start, u.end) for u in units]):
        return []
    starts = np.array([u.start for u in units], dtype=float)
    ends = np.array([u.end for u in units], dtype=float)
    vectors = _normalised(np.array([list(u.vector) for u in units], dtype=float))
    speakers = _speaker_columns([u.speaker for u in units])
    durations = (ends - starts)[:, None]
    similarity = SPEAKER_WEIGHT * block_similarity(starts, speakers * durations)
    similarity += (1 - SPEAKER_WEIGHT) * block_similarity(starts, vectors)
    depths = gap_depths(starts, ends, similarity)
    cues = np.array([bool(CUE.search(u.text)) for u in units[1:]], dtype=float)
    depths += CUE_WEIGHT * cues
    return [0, *(gap + 1 for gap in _chosen(depths, starts, ends))]


def block_similarity(starts: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """At each gap (after unit ``i``, for ``i`` in ``0..n-2``) the cosine of the sums of
    ``vectors`` in the :data:`WINDOW_SECONDS` before and after it."""
    count = len(starts)
    cumulative = np.vstack([np.zeros(vectors.shape[1]), np.cumsum(vectors, axis=0)])
    similarity = np.empty(count - 1)
    for gap in range(count - 1):
        at = starts[gap + 1]
        left = max(0, min(gap, int(np.searchsorted(starts, at - WINDOW_SECONDS))))
        right = max(gap + 2, int(np.searchsorted(starts, at + WINDOW_SECONDS)))
        before = cumulative[gap + 1] - cumulative[left]
        after = cumulative[right] - cumulative[gap + 1]
        similarity[gap] = _cosine(before, after)
    return similarity


def gap_depths(starts: np.ndarray, ends: np.ndarray, similarity: np.ndarray) -> np.ndarray:
    """The depth of each gap's similarity valley, plus its pause (module docstring)."""
    count = len(starts)
    gaps_at = starts[1:]
    depths = np.empty(count - 1)
    for gap in range(count - 1):
        near_left = (gaps_at >= gaps_at[gap] - PEAK_SECONDS) & (gaps_at <= gaps_at[gap])
        near_right = (gaps_at <= gaps_at[gap] + PEAK_SECONDS) & (gaps_at >= gaps_at[gap])
        here = similarity[gap]
        depths[gap] = similarity[near_left].max() - here + similarity[near_right].max() - here
    pauses = np.clip(starts[1:] - ends[:-1], 0.0, LONG_PAUSE_SECONDS) / LONG_PAUSE_SECONDS
    return depths + PAUSE_WEIGHT * pauses


def _chosen(depths: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """The gaps kept as boundaries (module docstring), in time order."""
    if not len(depths):
        return []
    cut = depths.mean() + DEPTH_CUT * depths.std()
    first, last = starts[0], ends[-1]
    kept: list[float] = []
    chosen: list[int] = []
    for gap in np.argsort(-depths, kind="stable"):
        if depths[gap] < cut or depths[gap] <= 0:
            break
        at = float(starts[gap + 1])
        if at - first < MIN_CHAPTER_SECONDS or last - at < MIN_CHAPTER_SECONDS:
            continue
        if any(abs(at - other) < MIN_CHAPTER_SECONDS for other in kept):
            continue
        kept.append(at)
        chosen.append(int(gap))
    return sorted(chosen)


def _speaker_columns(speakers: Sequence[str]) -> np.ndarray:
    """One column per speaker, 1 where a unit is theirs; one column of ones without labels."""
    names = sorted(set(speakers))
    return np.array([[float(s == name) for name in names] for s in speakers])


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0
