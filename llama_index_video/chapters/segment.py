"""Where a recording's topic changes: TextTiling over vectors and words, no model call.

The transcript units of a recording are already embedded at ingest; this module reads
their vectors and their words (in each unit's language: its stop words left out, Chinese and
Japanese read as words, see :mod:`.titles`) as a TextTiling sequence (Hearst 1997). At each gap
between two units it compares what was said in the :data:`WINDOW_SECONDS` before with
what was said in the same time after, twice: the cosine of the two blocks' summed
vectors (what it is about) and of their summed TF-IDF word counts (the words it uses:
a topic's own terms come back while it lasts, :data:`LEXICAL_WEIGHT` of the blend).
The blend is averaged over :data:`SMOOTH_SECONDS` on each side, so one odd turn makes
no valley. A topic change is a valley: its *depth* is how far it falls below the
highest similarity on each side within :data:`PEAK_SECONDS`. A pause before the next
unit, or a phrase that announces a new item (:data:`CUE`), deepens a gap a little. The
deepest gaps become boundaries, deepest first, as long as they stand out from this
recording's own gaps (:data:`DEPTH_CUT` standard deviations above their mean depth) and
every chapter stays at least :data:`MIN_CHAPTER_SECONDS` long.

A change of spoken language is a boundary of its own, whatever the words and vectors
say (:func:`language_starts`): a recording that goes from German to Spanish has its
words change completely while, read by an English embedding, both are foreign text,
and a new user's 9:24 join of German, Spanish, French and Portuguese FLEURS readings
(108-158 s each) was cut once, 14 s after a change. A change counts when the language
before it and the one after it each last :data:`MIN_LANGUAGE_SECONDS`; a shorter run (a
block of speech misheard as another language) is taken for the language around it. Such
a boundary may leave a chapter shorter than :data:`MIN_CHAPTER_SECONDS`; topic
boundaries keep that distance from it. A recording heard in one language is chaptered as before.

Windows are in seconds, not units, so the same settings fit long monologue units and
short meeting turns. The settings were chosen on four QMSum meetings and checked on
three others (``benchmarks/meetings.py``): who is speaking was tried as a third channel
and left out (no better). The work is a few block sums per gap: milliseconds for an hour.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from llama_index_video.chapters.titles import content_words

MIN_RECORDING_SECONDS = 180.0
"""Recordings shorter than this get no chapters: there is little to navigate."""
MIN_CHAPTER_SECONDS = 180.0
"""No chapter is shorter than this (boundaries closer together are not kept)."""
WINDOW_SECONDS = 240.0
"""How much speech on each side of a gap is compared."""
SMOOTH_SECONDS = 30.0
"""A gap's similarity is the mean of those of the gaps this close to it."""
PEAK_SECONDS = 480.0
"""How far on each side of a gap its depth looks for the highest similarity."""
LEXICAL_WEIGHT = 2 / 3
"""The share of a gap's similarity that is the words said, against the vectors."""
LEXICAL_COLUMNS = 4096
"""Word columns of the TF-IDF blocks; a larger vocabulary folds onto them (modulo)."""
PAUSE_WEIGHT = 0.04
"""Depth added by a pause of :data:`LONG_PAUSE_SECONDS` or more before the next unit."""
LONG_PAUSE_SECONDS = 5.0
DEPTH_CUT = 0.5
"""A boundary's depth is at least the mean depth plus this many standard deviations."""
CUE_WEIGHT = 0.05
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
MIN_LANGUAGE_SECONDS = 60.0
"""A run of units heard in one language this long (first start to last end) is a
sustained language: the language check labels blocks of about 6 s of speech, and the
longest stretch of real English it was measured to mislabel was 24 s
(:mod:`llama_index_video.transcription.language`), while the shortest language of the
FLEURS join lasts 108 s."""


@dataclass(frozen=True)
class TimedVector:
    """One transcript unit as segmentation sees it: its span, its embedding and what was
    said."""

    start: float
    end: float
    vector: Sequence[float]
    text: str = ""
    language: str | None = None
    """The language it was heard in (a Whisper code), whose stop words its words leave
    out; None: English."""


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
    lexical = tf_idf([content_words(u.text, u.language, kanji_pairs=True) for u in units])
    similarity = LEXICAL_WEIGHT * block_similarity(starts, lexical)
    similarity += (1 - LEXICAL_WEIGHT) * block_similarity(starts, vectors)
    depths = gap_depths(starts, ends, _smoothed(starts[1:], similarity))
    cues = np.array([bool(CUE.search(u.text)) for u in units[1:]], dtype=float)
    depths += CUE_WEIGHT * cues
    changes = language_starts(units)
    topics = _chosen(depths, starts, ends, [float(starts[i]) for i in changes])
    return sorted({0, *changes, *(gap + 1 for gap in topics)})


def language_starts(units: Sequence[TimedVector]) -> list[int]:
    """Indexes of the units where a sustained change of language begins, in order.

    The units fall into runs of one language (a unit without a language is English). The
    shortest run under :data:`MIN_LANGUAGE_SECONDS` (first start to last end) is heard as
    its longer neighbour's language, joining it, until every run lasts that long: a
    Spanish reading misheard as Portuguese inside Spanish is Spanish again, and the
    Spanish on both sides of it one run.
    """
    # (first unit, last unit, language)
    runs = _joined([(index, index, unit.language or "en") for index, unit in enumerate(units)])

    def seconds(run: tuple[int, int, str]) -> float:
        return units[run[1]].end - units[run[0]].start

    while len(runs) > 1:
        shortest = min(range(len(runs)), key=lambda i: seconds(runs[i]))
        if seconds(runs[shortest]) >= MIN_LANGUAGE_SECONDS:
            break
        beside = [i for i in (shortest - 1, shortest + 1) if 0 <= i < len(runs)]
        heard_as = runs[max(beside, key=lambda i: seconds(runs[i]))][2]
        runs[shortest] = (*runs[shortest][:2], heard_as)
        runs = _joined(runs)
    return [first for first, _, _ in runs[1:]]


def _joined(runs: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``runs`` with neighbours of the same language made one."""
    joined: list[tuple[int, int, str]] = []
    for first, last, language in runs:
        if joined and joined[-1][2] == language:
            joined[-1] = (joined[-1][0], last, language)
        else:
            joined.append((first, last, language))
    return joined


def block_similarity(starts: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """At each gap (after unit ``i``, for ``i`` in ``0..n-2``) the cosine of the sums of
    ``vectors`` in the :data:`WINDOW_SECONDS` before and after it."""
    count = len(starts)
    cumulative = np.vstack([np.zeros((1, vectors.shape[1]), vectors.dtype), vectors.cumsum(axis=0)])
    similarity = np.empty(count - 1)
    for gap in range(count - 1):
        at = starts[gap + 1]
        left = max(0, min(gap, int(np.searchsorted(starts, at - WINDOW_SECONDS))))
        right = max(gap + 2, int(np.searchsorted(starts, at + WINDOW_SECONDS)))
        before = cumulative[gap + 1] - cumulative[left]
        after = cumulative[right] - cumulative[gap + 1]
        similarity[gap] = _cosine(before, after)
    return similarity


def tf_idf(unit_words: Sequence[Sequence[str]]) -> np.ndarray:
    """One row per unit: its content words
    (:func:`~llama_index_video.chapters.titles.content_words`, in the unit's language),
    each counted with the weight of its inverse unit frequency, folded onto
    :data:`LEXICAL_COLUMNS` columns."""
    columns: dict[str, int] = {}
    rows = [[columns.setdefault(w, len(columns)) for w in said] for said in unit_words]
    units_with = np.zeros(max(1, len(columns)))
    for ids in rows:
        units_with[list(set(ids))] += 1
    idf = np.log(len(rows) / np.maximum(units_with, 1.0))
    weighed = np.zeros((len(rows), min(LEXICAL_COLUMNS, len(units_with))), np.float32)
    for row, ids in enumerate(rows):
        np.add.at(weighed[row], np.array(ids, dtype=int) % LEXICAL_COLUMNS, idf[ids])
    return weighed


def _smoothed(gaps_at: np.ndarray, similarity: np.ndarray) -> np.ndarray:
    """Each gap's similarity averaged with those within :data:`SMOOTH_SECONDS`."""
    cumulative = np.concatenate([[0.0], np.cumsum(similarity)])
    low = np.searchsorted(gaps_at, gaps_at - SMOOTH_SECONDS, side="left")
    high = np.searchsorted(gaps_at, gaps_at + SMOOTH_SECONDS, side="right")
    return (cumulative[high] - cumulative[low]) / (high - low)


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


def _chosen(
    depths: np.ndarray, starts: np.ndarray, ends: np.ndarray, fixed: Sequence[float]
) -> list[int]:
    """The gaps kept as topic boundaries (module docstring), in time order, each at least
    :data:`MIN_CHAPTER_SECONDS` from the ``fixed`` boundaries (in seconds)."""
    if not len(depths):
        return []
    cut = depths.mean() + DEPTH_CUT * depths.std()
    first, last = starts[0], ends[-1]
    kept: list[float] = list(fixed)
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


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0
