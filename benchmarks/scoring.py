"""Scoring for the retrieval evaluation: pure functions, unit-tested in tests/benchmarks."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    question: str
    file: str | None = None
    start: float | None = None
    end: float | None = None
    answer: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        return self.kind != "none"


@dataclass(frozen=True)
class RankedHit:
    """What a system returned for a question, in rank order."""

    file: str
    start: float | None
    end: float | None
    text: str  # the hit and the context it hands onwards


def normalise(text: str) -> str:
    """Lower-case, NFKC, punctuation to spaces, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text).split())


def is_hit(question: Question, hit: RankedHit, *, tolerance: float = 0.5) -> bool:
    """The right file and, for timed questions, a span overlapping the labelled moment."""
    if question.file is None or hit.file != question.file:
        return False
    if question.start is None or question.end is None:
        return True
    if hit.start is None or hit.end is None:
        return False
    return hit.start <= question.end + tolerance and hit.end >= question.start - tolerance


def first_hit_rank(question: Question, hits: Sequence[RankedHit]) -> int | None:
    """1-based rank of the first hit, or None."""
    return next((rank for rank, hit in enumerate(hits, 1) if is_hit(question, hit)), None)


def answer_in_context(question: Question, hits: Sequence[RankedHit], *, depth: int = 3) -> bool:
    """Whether an answer alternative appears in the top ``depth`` hits' text."""
    haystack = f" {normalise(' '.join(h.text for h in hits[:depth]))} "
    return any(
        all(f" {normalise(part)}" in haystack for part in alternative.split("&"))
        for alternative in question.answer
    )


@dataclass(frozen=True)
class Summary:
    count: int
    recall: dict[int, float]
    mrr: float
    answer_at_3: float


def summarise(
    results: Sequence[tuple[Question, Sequence[RankedHit]]], *, ks: Sequence[int] = (1, 3, 5)
) -> Summary:
    """Recall@k, MRR and answer-in-top-3 over answerable questions."""
    answerable = [(q, h) for q, h in results if q.answerable]
    if not answerable:
        return Summary(0, {k: 0.0 for k in ks}, 0.0, 0.0)
    ranks = [first_hit_rank(q, h) for q, h in answerable]
    count = len(answerable)
    return Summary(
        count=count,
        recall={k: sum(1 for r in ranks if r is not None and r <= k) / count for k in ks},
        mrr=sum(1 / r for r in ranks if r is not None) / count,
        answer_at_3=sum(answer_in_context(q, h) for q, h in answerable) / count,
    )


def rejection_rate(results: Sequence[tuple[Question, Sequence[RankedHit]]]) -> float:
    """Share of no-answer questions for which nothing was returned."""
    negatives = [hits for q, hits in results if not q.answerable]
    return sum(1 for hits in negatives if not hits) / len(negatives) if negatives else 0.0


def answered_rate(results: Sequence[tuple[Question, Sequence[RankedHit]]]) -> float:
    """Share of answerable questions for which something was returned."""
    positives = [hits for q, hits in results if q.answerable]
    return sum(1 for hits in positives if hits) / len(positives) if positives else 0.0


def balanced_accuracy(
    labels: Sequence[bool], accepted: Sequence[bool], *, answer_weight: float = 1.0
) -> float:
    """Weighted mean of the answered rate (answerable) and the rejected rate (no answer).

    ``answer_weight`` is how many wrongly answered no-answer questions one wrongly
    rejected answerable question is worth (1: plain balanced accuracy).
    """
    positives = [a for label, a in zip(labels, accepted, strict=True) if label]
    negatives = [not a for label, a in zip(labels, accepted, strict=True) if not label]
    weighted = [
        (weight, sum(group) / len(group))
        for weight, group in ((answer_weight, positives), (1.0, negatives))
        if group
    ]
    total = sum(weight for weight, _ in weighted)
    return sum(weight * share for weight, share in weighted) / total if weighted else 0.0


@dataclass(frozen=True)
class Cut:
    """A decision threshold on a score, with its balanced accuracy and the gap it sits in."""

    value: float
    accuracy: float
    gap: float


def best_cut(labels: Sequence[bool], scores: Sequence[float], *, answer_weight: float = 1.0) -> Cut:
    """The cut (accept ``score >= cut``) with the best balanced accuracy on these examples.

    Candidates are the midpoints between consecutive distinct scores (and one below
    and above all); ties go to the widest gap between the scores either side, so the
    cut sits where the examples leave the most room, not on one of them.
    """
    if not scores:
        raise ValueError("no scores to cut")
    ordered = sorted(set(scores))
    bounds = [ordered[0] - 1.0, *ordered, ordered[-1] + 1.0]
    best: Cut | None = None
    for low, high in itertools.pairwise(bounds):
        value = (low + high) / 2
        accepted = [s >= value for s in scores]
        accuracy = balanced_accuracy(labels, accepted, answer_weight=answer_weight)
        candidate = Cut(value, accuracy, high - low)
        if best is None or (accuracy, candidate.gap) > (best.accuracy, best.gap):
            best = candidate
    assert best is not None
    return best


def folds(questions: Sequence[Question], count: int) -> list[list[Question]]:
    """``count`` disjoint folds, answerable and no-answer questions dealt round-robin.

    The order is the questions' ids sorted, so folds are the same on every run.
    """
    if count < 2:
        raise ValueError(f"need at least 2 folds, got {count}")
    split: list[list[Question]] = [[] for _ in range(count)]
    position = 0
    for group in (True, False):
        for question in sorted((q for q in questions if q.answerable == group), key=_id):
            split[position % count].append(question)
            position += 1
    return split


def _id(question: Question) -> str:
    return question.id


def edit_distance(reference: Sequence[object], hypothesis: Sequence[object]) -> int:
    """Levenshtein distance: insertions, deletions and substitutions, each costing 1.

    One row of the table at a time, in numpy (an hour of speech is 10,000 words a side):
    a cell is the least of the row above (deletion, substitution), which is vectorised,
    and the cell to its left plus one (insertion), which a running minimum of
    ``cell - column`` gives for the whole row at once.
    """
    ids: dict[object, int] = {}
    got = np.array([ids.setdefault(word, len(ids)) for word in hypothesis], dtype=np.int64)
    columns = np.arange(len(got) + 1)
    previous = columns.copy()
    for row, word in enumerate(reference, start=1):
        wanted = ids.get(word, -1)
        best = np.empty_like(previous)
        best[0] = row
        best[1:] = np.minimum(previous[1:] + 1, previous[:-1] + (got != wanted))
        previous = np.minimum.accumulate(best - columns) + columns
    return int(previous[-1])


def error_rate(reference: Sequence[object], hypothesis: Sequence[object]) -> float:
    """Edit distance over the reference's length (words for WER, characters for CER);
    an empty reference scores 1 against any hypothesis and 0 against none."""
    if not reference:
        return float(bool(hypothesis))
    return edit_distance(reference, hypothesis) / len(reference)
