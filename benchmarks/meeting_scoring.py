"""Scoring for the meeting benchmark: pure functions, unit-tested in tests/benchmarks.

A meeting here is its turns with the seconds a reader would take to say them
(:func:`turn_times`, synthetic timing), the annotated topics as time spans, and the
annotators' questions with the stretches that answer them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index_video.search.relevance import STOPWORDS

WORDS_PER_SECOND = 2.6
"""A reading pace (156 words a minute) that turns a transcript's turns into times."""
TURN_GAP_SECONDS = 0.4
_MARKUP = re.compile(r"\{[^}]*\}")
_WORD = re.compile(r"[a-z0-9]+")
MEETING_PARTS = frozenset({"discussion", "evaluation", "introduction", "meeting", "presentation"})
"""Words annotators name the parts of any meeting with, not what a part is about: the
words of QMSum's train topics in meetings of all three kinds (product design, research,
parliament committee) and of more than 20 of its 162 meetings ("discussion" 49,
"meeting" 47, "presentation" 41, "evaluation" and "introduction" 26; the next, "cost",
17). A title saying one of them names no topic."""


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    start: float
    end: float


def clean(text: str) -> str:
    """A transcript turn without its annotation marks (``{vocalsound}``) and spaced
    punctuation (``word .`` -> ``word.``)."""
    text = _MARKUP.sub(" ", text)
    text = re.sub(r"\s+([.,?!])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def turn_times(turns: Sequence[tuple[str, str]]) -> list[Turn]:
    """Each ``(speaker, text)`` turn timed as read at :data:`WORDS_PER_SECOND`, turns
    :data:`TURN_GAP_SECONDS` apart."""
    timed = []
    at = 0.0
    for speaker, text in turns:
        seconds = max(0.6, len(text.split()) / WORDS_PER_SECOND)
        timed.append(Turn(speaker, text, round(at, 3), round(at + seconds, 3)))
        at += seconds + TURN_GAP_SECONDS
    return timed


def boundary_f1(
    truth: Sequence[float], found: Sequence[float], *, tolerance: float = 30.0
) -> tuple[float, float, float]:
    """Precision, recall and F1 of ``found`` boundaries against ``truth`` (seconds), each
    true boundary matched at most once, to the nearest found within ``tolerance``."""
    if not truth and not found:
        return 1.0, 1.0, 1.0
    unused = list(found)
    matched = 0
    for boundary in truth:
        near = [f for f in unused if abs(f - boundary) <= tolerance]
        if near:
            unused.remove(min(near, key=lambda f: abs(f - boundary)))
            matched += 1
    precision = matched / len(found) if found else 0.0
    recall = matched / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if matched else 0.0
    return precision, recall, f1


def pk(
    truth: Sequence[float], found: Sequence[float], *, length: float, step: float = 1.0
) -> float:
    """Beeferman's Pk over time: probe pairs ``k`` seconds apart (half the mean true
    segment), the share where truth and ``found`` disagree on being in one segment."""
    k = length / (len(truth) + 1) / 2
    if k <= 0 or length <= k:
        return 0.0

    def segment(bounds: Sequence[float], t: float) -> int:
        return sum(1 for b in bounds if b <= t)

    probes = [i * step for i in range(int((length - k) / step))]
    wrong = sum(
        (segment(truth, t) == segment(truth, t + k)) != (segment(found, t) == segment(found, t + k))
        for t in probes
    )
    return wrong / len(probes) if probes else 0.0


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` of four letters or more, a light stem (plural ``s``),
    without function words (search's :data:`STOPWORDS`) and :data:`MEETING_PARTS`."""
    words = (w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in STOPWORDS)
    return {w.removesuffix("s") for w in words} - MEETING_PARTS


def title_matches(title: str, topic: str) -> bool:
    """Whether a chapter title shares a content word with an annotated topic."""
    return bool(content_words(title) & content_words(topic))


def own_words(titles: Sequence[str]) -> list[float]:
    """For each of one recording's chapter ``titles``, the share of its words that no
    other title has (1: a title of its own; 0: every word repeated elsewhere)."""
    sets = [set(_WORD.findall(title.lower())) for title in titles]
    shares = []
    for i, words in enumerate(sets):
        others = set().union(*(other for j, other in enumerate(sets) if j != i))
        shares.append(len(words - others) / len(words) if words else 0.0)
    return shares


def overlaps(start: float, end: float, spans: Sequence[tuple[float, float]]) -> bool:
    """Whether ``[start, end]`` overlaps any of ``spans``."""
    return any(start < b and a < end for a, b in spans)


def first_found(
    spans: Sequence[tuple[float, float]], found: Sequence[tuple[float, float]]
) -> int | None:
    """The rank (from 1) of the first of ``found`` overlapping one of ``spans``; None
    if none does."""
    for rank, (start, end) in enumerate(found, start=1):
        if overlaps(start, end, spans):
            return rank
    return None


def found_at(ranks: Sequence[int | None], k: int) -> int:
    """How many of the questions whose first right hit came at ``ranks`` (None: never)
    found it in the first ``k``."""
    return sum(rank is not None and rank <= k for rank in ranks)
