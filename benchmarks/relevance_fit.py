"""Each hit's confidence and the relevance gate, fitted leave-one-set-out (issue 35).

    python benchmarks/relevance_fit.py [--index-root DIR] [--cache DIR] [--refresh]

Every question set of :data:`~benchmarks.relevance_sets.SETS` (recordings indexed
together, with the questions written about them, searched with one embedding model) is
read from its cache (``--cache``, default ``benchmarks/relevance_signals/``: each
question's hits without the gate and the index's vocabulary; ``--refresh`` searches
again, as does a change of the questions or of the default similarity threshold;
``--index-root`` holds the index folders, reused when they exist).

Each embedding model gets its own fit, over the sets searched with it. For each set,
the confidence model (:class:`~llama_index_video.search.relevance.Calibration`) and the
gate's two bars are fitted on the *other* sets of the model and scored on this one:
how many answerable questions come back empty, how many unanswerable ones are turned
away, R@1 and R@3 against no gate and (for all-MiniLM-L6-v2) the previous default gate
(best cosine plus coverage, cut 0.39). The bars are conservative by construction
(:func:`fitted`): ``cut`` leaves at most ``EMPTY_AT_CUT`` of each training set's
answerable questions empty, ``sure`` (what ``ask`` with a model uses) at most
``EMPTY_WHEN_SURE``, both lowered by a leave-one-set-out margin (:func:`margin`). The
trade-off of ``ask`` (answerable questions that skip the model against unanswerable
ones that reach it) is printed for a range of bars. The same is done for subsets of the signals
(:data:`SIGNAL_SETS`), to keep only what wins held out.
Last, the model fitted on every set of the model is printed, to put in
``llama_index_video.search.policy.DEFAULT_CALIBRATIONS`` (and ``DEFAULT_GATES``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.meeting_scoring import overlaps  # noqa: E402
from benchmarks.relevance_sets import BENCHMARKS, SETS, Hit, Row, cached  # noqa: E402
from benchmarks.scoring import RankedHit, first_hit_rank  # noqa: E402
from llama_index_video.search.policy import MINILM_IDENTITY  # noqa: E402
from llama_index_video.search.relevance import (  # noqa: E402
    FEATURES,
    Calibration,
    RelevanceGate,
    hit_features,
)

EMPTY_AT_CUT = 0.01
"""The search gate's bar: at most this share of each fit set's answerable questions left
empty. At 0.02 a set of 60 (the examples, the meetings) let its second lowest set the
bar, and held out the bicycle narration lost 1 of 16 (over the 2 % target): a bar
that may empty one answer in a fit set empties more on a new one."""
EMPTY_WHEN_SURE = 0.01
"""The sure bar (``ask`` with a model): at most this share left empty."""
PREVIOUS_GATE = RelevanceGate(weight=1.0, cut=0.39)
"""The default gate before issue 35 (all-MiniLM-L6-v2's), for comparison."""
L2 = 0.01
NEWTON_STEPS = 30


SIGNAL_SETS: dict[str, tuple[str, ...]] = {
    "cosine + coverage (the old gate's)": ("similarity", "coverage"),
    "+ hit's own cosine and coverage": ("cosine", "own_coverage", "similarity", "coverage"),
    "+ gap to the other hits": ("cosine", "own_coverage", "similarity", "coverage", "gap"),
    "+ exact words (lexical)": FEATURES[:6],
    "+ holds the number asked for": FEATURES[:7],
    "+ holds the name asked for": FEATURES[:8],
    "all (+ words absent from the index)": FEATURES,
    "all but the name asked for": (*FEATURES[:7], "absent"),
}
CHOSEN = "all (+ words absent from the index)"
"""The signals the shipped confidence uses (what wins held out)."""


def searched(hits: Sequence[Hit]):
    from llama_index_video.results import SearchHit

    return [
        SearchHit(
            source=h.file,
            modality=h.modality,
            start=h.start,
            end=h.end,
            score=h.score,
            text=h.text,
            label="",
            url=None,
            frame_path=None,
            frame_time=None,
        )
        for h in hits
    ]


def ranked(hits: Sequence[Hit]) -> list[RankedHit]:
    return [RankedHit(h.file, h.start, h.end, h.text) for h in hits]


def is_answer(row: Row, hit: Hit) -> bool:
    """The hit is the question's moment: for a question with several answer stretches
    (the meetings'), one overlapping any of them, as ``benchmarks/meeting_search.py``
    counts it."""
    if not row.spans:
        return first_hit_rank(row.question, ranked([hit])) == 1
    if hit.file != row.question.file or hit.start is None or hit.end is None:
        return False
    return overlaps(hit.start, hit.end, row.spans)


def answer_rank(row: Row) -> int | None:
    """1-based rank of the first hit that answers (:func:`is_answer`), or None."""
    return next((rank for rank, hit in enumerate(row.hits, 1) if is_answer(row, hit)), None)


def features(rows: Sequence[Row]) -> list[np.ndarray]:
    """Each row's hits' features (one array per row, a hit per line)."""
    out = []
    for row in rows:
        hits = searched(row.hits)
        fused = [h.fused for h in row.hits]
        table = hit_features(row.question.question, hits, fused, absent=row.absent)
        out.append(np.array(table, dtype=float).reshape(len(row.hits), len(FEATURES)))
    return out


@dataclass(frozen=True, kw_only=True)
class Logistic:
    """A logistic model over other columns than :data:`FEATURES` (candidate signals,
    ``benchmarks/relevance_candidates.py``): what :class:`Calibration` is for those."""

    names: tuple[str, ...]
    coefficients: tuple[float, ...]
    intercept: float

    def probability(self, features: Sequence[float]) -> float:
        z = self.intercept + sum(c * f for c, f in zip(self.coefficients, features, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


Model = Calibration | Logistic


def fit(
    rows: Sequence[Row],
    feats: Sequence[np.ndarray],
    used: Sequence[str],
    names: Sequence[str] = FEATURES,
) -> Model:
    """Logistic regression of "this hit answers" on the ``used`` features (of the
    columns ``names``), each question weighing one in all (its hits share it), with a
    small L2 penalty on the standardised coefficients (not the intercept). Newton's
    method on the convex loss, a fixed number of steps (it converges in fewer)."""
    mask = np.array([name in used for name in names])
    x = np.concatenate([f for f in feats if len(f)])[:, mask]
    y = np.concatenate([[is_answer(r, h) for h in r.hits] for r in rows if r.hits]).astype(float)
    w = np.concatenate([np.full(len(r.hits), 1 / len(r.hits)) for r in rows if r.hits])
    w = w / w.sum()
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.column_stack([(x - mean) / std, np.ones(len(x))])
    penalty = np.diag([L2] * mask.sum() + [0.0])
    theta = np.zeros(z.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-np.clip(z @ theta, -50, 50)))
        gradient = z.T @ (w * (p - y)) + penalty @ theta
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + penalty
        theta -= np.linalg.solve(hessian + 1e-12 * np.eye(len(theta)), gradient)
    beta, bias = theta[:-1], theta[-1]
    coefficients = np.zeros(len(names))
    coefficients[mask] = beta / std
    rounded = tuple(round(float(c), 4) for c in coefficients)
    intercept = round(float(bias - (beta * mean / std).sum()), 4)
    if tuple(names) == FEATURES:
        return Calibration(coefficients=rounded, intercept=intercept)
    return Logistic(names=tuple(names), coefficients=rounded, intercept=intercept)


def best_confidences(model: Model, feats: Sequence[np.ndarray]) -> list[float]:
    return [max((model.probability(tuple(line)) for line in f), default=0.0) for f in feats]


def found(row: Row) -> bool:
    """Whether search without a gate returned the question's moment (among its hits)."""
    return row.question.answerable and any(is_answer(row, hit) for hit in row.hits)


def logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return float(np.log(p / (1 - p)))


def bar(rows: Sequence[Row], best: Sequence[float], empty: float) -> float:
    """The highest bar leaving at most ``empty`` of one set's answerable questions empty
    (those search returned anything for: every one the user would see turned away)."""
    answerable = sorted(
        b for r, b in zip(rows, best, strict=True) if r.question.answerable and r.hits
    )
    allowed = int(empty * len(answerable))
    return float(answerable[allowed]) if answerable else 1.0


def lowest_bar(
    model: Model, sets: dict[str, list[Row]], feats: dict[str, list[np.ndarray]], empty: float
) -> float:
    """The highest bar leaving at most ``empty`` of the answerable questions empty on
    *every* one of ``sets`` (the lowest of their own bars)."""
    return min(bar(sets[name], best_confidences(model, feats[name]), empty) for name in sets)


def margin(
    sets: dict[str, list[Row]],
    feats: dict[str, list[np.ndarray]],
    used: Sequence[str],
    names: Sequence[str] = FEATURES,
) -> float:
    """How far (in log-odds) a set's lowest answerable question fell under the lowest
    bar of a fit that did not see it, at worst over ``sets`` (leave-one-set-out inside
    them): what a bar fitted on these sets must be lowered by to hold on a new one."""
    shortfalls = [0.0]
    for name in sets if len(sets) > 2 else ():
        others = {o: sets[o] for o in sets if o != name}
        other_feats = {o: feats[o] for o in others}
        model = fit(
            [r for o in others for r in others[o]],
            [f for o in others for f in feats[o]],
            used,
            names,
        )
        fitted = lowest_bar(model, others, other_feats, 0.0)
        own = bar(sets[name], best_confidences(model, feats[name]), 0.0)
        shortfalls.append(logit(fitted) - logit(own))
    return max(shortfalls)


@dataclass(frozen=True)
class Fitted:
    """A confidence model and the gate's two bars, fitted on some sets."""

    model: Model
    cut: float
    sure: float
    margin: float
    """In log-odds: how far both bars were lowered under the fit sets' own (:func:`margin`)."""


def fitted(
    sets: dict[str, list[Row]],
    feats: dict[str, list[np.ndarray]],
    used: Sequence[str],
    names: Sequence[str] = FEATURES,
) -> Fitted:
    """The confidence model fitted on every row of ``sets``, and its bars: ``cut`` leaves
    at most ``EMPTY_AT_CUT`` of each set's answerable questions empty, ``sure`` at most
    ``EMPTY_WHEN_SURE``, both then lowered by :func:`margin` (conservative by
    construction: a wrong empty is worse than a weak hit)."""
    every = [r for rows in sets.values() for r in rows]
    model = fit(every, [f for n in sets for f in feats[n]], used, names)
    lowered = margin(sets, feats, used, names)

    def lower(p: float) -> float:
        return round(float(1 / (1 + np.exp(lowered - logit(p)))), 4)

    return Fitted(
        model,
        lower(lowest_bar(model, sets, feats, EMPTY_AT_CUT)),
        lower(lowest_bar(model, sets, feats, EMPTY_WHEN_SURE)),
        round(lowered, 3),
    )


@dataclass(frozen=True)
class Scores:
    empty: float
    """Answerable questions returned empty (share)."""
    turned_away: float
    """Unanswerable questions returned empty (share)."""
    r1: float
    r3: float
    answerable: int
    unanswerable: int

    def cells(self) -> str:
        return f"{self.empty:.2f} | {self.turned_away:.2f} | {self.r1:.2f} | {self.r3:.2f}"


def score(rows: Sequence[Row], kept: Sequence[bool]) -> Scores:
    answerable = [(r, k) for r, k in zip(rows, kept, strict=True) if r.question.answerable]
    others = [k for r, k in zip(rows, kept, strict=True) if not r.question.answerable]
    ranks = [answer_rank(r) if k else None for r, k in answerable]
    n = len(answerable) or 1
    return Scores(
        empty=sum(not (k and r.hits) for r, k in answerable) / n,
        turned_away=sum(not k for k in others) / (len(others) or 1),
        r1=sum(rank == 1 for rank in ranks) / n,
        r3=sum(rank is not None and rank <= 3 for rank in ranks) / n,
        answerable=len(answerable),
        unanswerable=len(others),
    )


def previous(rows: Sequence[Row]) -> list[bool]:
    return [
        bool(r.hits) and PREVIOUS_GATE.accepts(r.question.question, searched(r.hits)) for r in rows
    ]


@dataclass(frozen=True)
class Held:
    """One set scored by the fit on the others."""

    gate: Fitted
    at_cut: Scores
    when_sure: Scores
    best: list[float]
    """Each question's best confidence under that fit."""


def leave_one_out(
    sets: dict[str, list[Row]],
    feats: dict[str, list[np.ndarray]],
    used: Sequence[str],
    names: Sequence[str] = FEATURES,
) -> dict[str, Held]:
    out = {}
    for name in sets:
        others = {o: sets[o] for o in sets if o != name}
        gate = fitted(others, {o: feats[o] for o in others}, used, names)
        held = best_confidences(gate.model, feats[name])
        rows = sets[name]
        out[name] = Held(
            gate,
            score(rows, [b >= gate.cut and bool(r.hits) for b, r in zip(held, rows, strict=True)]),
            score(rows, [b >= gate.sure and bool(r.hits) for b, r in zip(held, rows, strict=True)]),
            held,
        )
    return out


TRADE_OFF = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
"""The shares of the fit sets' answerable questions a bar may leave empty (each set's
own share, no margin), for the trade-off of ``ask`` with a model."""


def trade_off(
    sets: dict[str, list[Row]], feats: dict[str, list[np.ndarray]], held: dict[str, Held]
) -> list[tuple[str, int, int, int, int, float]]:
    """For ``ask`` with a model, held out and summed over ``sets``: at each bar (the
    shipped ``sure``, then those of :data:`TRADE_OFF`), the answerable questions that
    skip the model, the unanswerable ones that reach it, their totals, and the worst
    set's share of answerable questions skipped."""
    bars: list[tuple[str, dict[str, float]]] = [
        ("the shipped construction of `sure` (with its margin)", {}),
        *((f"{q:.0%} of each fit set's answerable", {}) for q in TRADE_OFF),
    ]
    for name, result in held.items():
        others = {o: sets[o] for o in sets if o != name}
        other_feats = {o: feats[o] for o in others}
        bars[0][1][name] = result.gate.sure
        for (_, by_set), q in zip(bars[1:], TRADE_OFF, strict=True):
            by_set[name] = lowest_bar(result.gate.model, others, other_feats, q)
    lines = []
    for label, by_set in bars:
        skipped = reached = answerable = unanswerable = 0
        worst = 0.0
        for name, rows in sets.items():
            kept = [
                b >= by_set[name] and bool(r.hits)
                for b, r in zip(held[name].best, rows, strict=True)
            ]
            scores = score(rows, kept)
            skipped += round(scores.empty * scores.answerable)
            reached += round((1 - scores.turned_away) * scores.unanswerable)
            answerable, unanswerable = (
                answerable + scores.answerable,
                unanswerable + scores.unanswerable,
            )
            worst = max(worst, scores.empty)
        lines.append((label, skipped, answerable, reached, unanswerable, worst))
    return lines


def report(identity: str, sets: dict[str, list[Row]]) -> None:
    """Print the held-out tables of the sets searched with one embedding model, and the
    model fitted on all of them (for ``DEFAULT_CALIBRATIONS``)."""
    feats = {name: features(rows) for name, rows in sets.items()}
    print(f"# {identity}\n\n## Each set scored by the fit on the others (leave-one-set-out)\n")
    print(
        "| set | answerable / unanswerable | gate | answerable empty | unanswerable "
        "turned away | R@1 | R@3 |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    results = {label: leave_one_out(sets, feats, used) for label, used in SIGNAL_SETS.items()}
    for name, rows in sets.items():
        off = score(rows, [True] * len(rows))
        counts = f"{off.answerable} / {off.unanswerable}"
        print(f"| {name} | {counts} | off | {off.cells()} |")
        if identity == MINILM_IDENTITY:  # the previous gate was fitted for it alone
            before = score(rows, previous(rows)).cells()
            print(f"| | | previous default (cosine + coverage >= 0.39) | {before} |")
        held = results[CHOSEN][name]
        print(f"| | | confidence >= cut ({held.gate.cut:.3f}) | {held.at_cut.cells()} |")
        print(f"| | | confidence >= sure ({held.gate.sure:.3f}) | {held.when_sure.cells()} |")
    print("\n## ask with a model, held out (at sure)\n")
    print("| set | answerable that skip the model | unanswerable that reach it |")
    print("|---|---:|---:|")
    for name, held in results[CHOSEN].items():
        sure = held.when_sure
        print(f"| {name} | {sure.empty:.2f} | {1 - sure.turned_away:.2f} |")
    print("\n## ask with a model: the trade-off, held out, all sets summed\n")
    print("| bar | answerable that skip the model (worst set) | unanswerable that reach it |")
    print("|---|---:|---:|")
    for label, skipped, answerable, reached, unanswerable, worst in trade_off(
        sets, feats, results[CHOSEN]
    ):
        print(
            f"| {label} | {skipped}/{answerable} ({worst:.2f}) | {reached}/{unanswerable} = "
            f"{reached / (unanswerable or 1):.2f} |"
        )
    print("\n## Signals compared, held out: answerable empty / unanswerable turned away\n")
    print("| signals | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for label, held_sets in results.items():
        cells = [f"{h.at_cut.empty:.2f} / {h.at_cut.turned_away:.2f}" for h in held_sets.values()]
        print(f"| {label} | " + " | ".join(cells) + " |")
    gate = fitted(sets, feats, SIGNAL_SETS[CHOSEN])
    print(f"\nfitted on all {sum(map(len, sets.values()))} questions ({CHOSEN}):")
    print(f"ConfidenceGate(calibration={gate.model}, cut={gate.cut}, sure={gate.sure})")
    print(f"(both bars lowered by a margin of {gate.margin} log-odds)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-root", type=Path, default=Path("/tmp/relevance-fit"))
    parser.add_argument("--cache", type=Path, default=BENCHMARKS / "relevance_signals")
    parser.add_argument("--refresh", action="store_true")
    args = parser.parse_args()
    groups: dict[str, dict[str, list[Row]]] = {}
    for spec in SETS:
        found = cached(spec, args.cache, args.index_root, refresh=args.refresh)
        groups.setdefault(found.identity, {})[spec.name] = found.rows
    for identity, sets in groups.items():
        report(identity, sets)


if __name__ == "__main__":
    main()
