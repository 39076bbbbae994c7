"""Which rejection signal separates answerable questions from near-topic ones, and does
its cut carry over to media it was not fitted on? (issue 10, defect 10)

    python benchmarks/rejection_signals.py --index DIR --heldout-index DIR1 DIR2 \\
        [--library-index DIR3]

The folders are index folders, built here if they do not exist yet (ingest is
incremental, so a reused folder is quick): ``--index`` of examples/media (the
questions the cuts are fitted on), ``--heldout-index`` one per held-out set of
``HELDOUT_SETS`` in that order (its recording alone), ``--library-index`` of
examples/media plus every held-out recording, where the held-out questions meet a
library of other recordings.

For every question it reads, without the gate, the candidates of search's shared
vector query of the text channels (the top 50, cosine similarities), the coverage of
the best three hits, the candidates of the best candidate's own recording
(``VideoIndex.recording_scores``; :mod:`llama_index_video.search.relevance`) and
how often the best moment stays the best when one content word is left out of the
question. From
these it derives the signals of ``BASES`` (each alone, and plus coverage at the weight
best on the examples) and prints one table: each signal's ROC AUC (how well it ranks
answerable above unanswerable, 0.5 is chance) on every set, and the cut fitted on the
examples alone (answers counted twice) scored on every held-out set, beside no gate.
Last come the shipped standout gate (``STANDOUT_GATES``) as it decides, abstaining on
recordings too short for a spread (``RelevanceGate.abstains``), and the same gate
judging every recording, as it did before it abstained; then, per set, how many
questions met a recording too short to judge.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.evaluate import (  # noqa: E402
    ANSWER_WEIGHT,
    EXAMPLES,
    HELDOUT_SETS,
    load_questions,
    ours,
)
from benchmarks.scoring import Question, balanced_accuracy, best_cut  # noqa: E402
from llama_index_video.search.relevance import (  # noqa: E402
    SPREAD_CANDIDATES,
    RelevanceGate,
    standout,
)

if TYPE_CHECKING:
    from llama_index.core.schema import NodeWithScore

    from llama_index_video.index import VideoIndex

CANDIDATES = 50
"""As many as search's shared top-k query of the text channels fetches."""
KTH = 10
"""``gap`` compares the best candidate with the k-th (the last one if fewer)."""
COVERAGE_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
"""Coverage weights tried per signal, in units of the signal's spread on the examples."""


@dataclass(frozen=True)
class Signals:
    answerable: bool
    found: bool
    """Whether search (threshold applied, no gate) returned anything."""
    cosines: tuple[float, ...]
    """The candidates' cosine similarities, best first."""
    own: tuple[float, ...]
    """The same, of the candidates from the best candidate's own recording."""
    coverage: float
    agreement: float
    """Share of leave-one-content-word-out variants whose best moment is the same."""

    @property
    def best(self) -> float:
        return self.cosines[0]


def gap(values: Sequence[float], k: int = KTH) -> float:
    """The best value minus the k-th best (the last one when there are fewer)."""
    return values[0] - values[min(k, len(values)) - 1]


def spread_share(values: Sequence[float]) -> float:
    """Where the median sits below the best, as a share of the whole range (0..1)."""
    span = values[0] - values[-1]
    return (values[0] - statistics.median(values)) / span if span > 0 else 0.0


Score = Callable[[Signals], float]

BASES: dict[str, Score] = {
    "cosine": lambda s: s.best,
    "margin": lambda s: s.best - statistics.mean(s.cosines),
    "headroom": lambda s: (s.best - statistics.mean(s.cosines)) / (1 - statistics.mean(s.cosines)),
    "z-score": lambda s: standout(s.cosines),
    f"best - {KTH}th": lambda s: gap(s.cosines),
    "range share": lambda s: spread_share(s.cosines),
    "z-score in own recording (standout)": lambda s: standout(s.own),
    "margin in own recording": lambda s: s.best - statistics.mean(s.own),
    "word-drop agreement": lambda s: s.agreement,
}


def variants(question: str) -> list[str]:
    """The question with one content word left out, for each of its content words."""
    from llama_index_video.search.relevance import content_words

    words = question.split()
    return [
        " ".join(words[:i] + words[i + 1 :]) for i, word in enumerate(words) if content_words(word)
    ]


def same_moment(a: NodeWithScore, b: NodeWithScore) -> bool:
    """The same node, or overlapping spans of the same recording."""
    from llama_index_video import schema

    if a.node.node_id == b.node.node_id:
        return True
    ma, mb = a.node.metadata, b.node.metadata
    if ma.get(schema.CONTENT_HASH) != mb.get(schema.CONTENT_HASH):
        return False
    spans = [(m.get(schema.START_S), m.get(schema.END_S)) for m in (ma, mb)]
    if any(start is None or end is None for start, end in spans):
        return False
    (sa, ea), (sb, eb) = spans
    return float(sa) <= float(eb) and float(sb) <= float(ea)


def read_signals(index: VideoIndex, questions: Sequence[Question]) -> list[Signals]:
    from llama_index_video.index import VideoIndex
    from llama_index_video.search.relevance import Relevance
    from llama_index_video.search.retriever import VideoRetriever

    bare = VideoIndex(index.path, embed_model=index.embed_model, relevance=None)
    candidates = VideoRetriever(bare.index, top_k=CANDIDATES)  # no threshold
    signals = []
    for question in questions:
        found = candidates.retrieve(question.question)
        best = found[0]
        tried = variants(question.question)
        kept = [same_moment(best, candidates.retrieve(v)[0]) for v in tried]
        hits = bare.search(question.question, top_k=5)
        signals.append(
            Signals(
                answerable=question.answerable,
                found=bool(hits),
                cosines=tuple(h.score or 0.0 for h in found),
                own=tuple(bare.recording_scores(question.question)),
                coverage=Relevance.of(question.question, hits).coverage,
                agreement=sum(kept) / len(kept) if kept else 1.0,
            )
        )
    bare.close()
    return signals


def auc(rows: Sequence[Signals], score: Score) -> float:
    positive = [score(r) for r in rows if r.answerable]
    negative = [score(r) for r in rows if not r.answerable]
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def rates(rows: Sequence[Signals], score: Score, cut: float) -> tuple[float, float, float]:
    """Answered share of the answerable, rejected share of the rest, and the weighted mix."""
    accepted = [r.found and score(r) >= cut for r in rows]
    answered = [a for a, r in zip(accepted, rows, strict=True) if r.answerable]
    rejected = [not a for a, r in zip(accepted, rows, strict=True) if not r.answerable]
    weighted = balanced_accuracy(
        [r.answerable for r in rows], accepted, answer_weight=ANSWER_WEIGHT
    )
    return sum(answered) / len(answered), sum(rejected) / len(rejected), weighted


def fit(rows: Sequence[Signals], score: Score) -> tuple[float, float]:
    """The cut best on ``rows`` and its weighted accuracy; a query search found nothing
    for is rejected whatever the cut, so it is scored below every other."""
    scores = [score(r) for r in rows]
    floor = min(scores) - 1.0
    labels = [r.answerable for r in rows]
    ranked = [s if r.found else floor for s, r in zip(scores, rows, strict=True)]
    cut = best_cut(labels, ranked, answer_weight=ANSWER_WEIGHT)
    return cut.value, cut.accuracy


def with_coverage(base: Score, weight: float) -> Score:
    return lambda s: base(s) + weight * s.coverage


def candidates(examples: Sequence[Signals]) -> list[tuple[str, Score]]:
    """Each base alone, and plus coverage at the weight best on the examples."""
    chosen: list[tuple[str, Score]] = []
    for name, base in BASES.items():
        chosen.append((name, base))
        unit = statistics.pstdev(base(r) for r in examples) or 1.0
        weights = [round(unit * w, 3) for w in COVERAGE_WEIGHTS[1:]]
        weight = min(weights, key=lambda w: (-fit(examples, with_coverage(base, w))[1], w))
        chosen.append((f"{name} + {weight:g} coverage", with_coverage(base, weight)))
    return chosen


def shipped(gate: RelevanceGate, *, abstain: bool = True) -> Score:
    """The standout gate's decision as a score against its own cut: above every cut
    where it abstains (a recording too short to judge), else its combined score."""

    def score(s: Signals) -> float:
        if abstain and gate.abstains(s.own):
            return math.inf
        return standout(s.own) + gate.weight * s.coverage

    return score


def table(
    examples: Sequence[Signals],
    held_out: dict[str, Sequence[Signals]],
    gate: RelevanceGate | None = None,
) -> list[str]:
    """One markdown row per signal: AUC on every set, then the examples' cut on each;
    with ``gate``, its rows (see the module docstring)."""
    names = ["examples", *held_out]
    lines = [
        "| signal | cut | "
        + " | ".join(f"AUC {n}" for n in names)
        + " | "
        + " | ".join(f"{n}: ans / rej / w" for n in names)
        + " |",
        "|---|---:|" + "---:|" * len(names) + "---|" * len(names),
    ]
    sets = {"examples": examples, **held_out}

    def decided(score: Score, cut: float) -> str:
        cells = []
        for rows in sets.values():
            answered, rejected, weighted = rates(rows, score, cut)
            cells.append(f"{answered:.2f} / {rejected:.2f} / {weighted:.2f}")
        return " | ".join(cells)

    for name, score in candidates(examples):
        cut, _ = fit(examples, score)
        aucs = " | ".join(f"{auc(rows, score):.3f}" for rows in sets.values())
        lines.append(f"| {name} | {cut:.3f} | {aucs} | {decided(score, cut)} |")
    blank = " | ".join("" for _ in names)
    lines.append(f"| no gate | | {blank} | {decided(lambda s: 1.0, 0.0)} |")
    if gate is not None:
        shown = f"({gate.weight:g}, {gate.cut:g})"
        for label, abstain in (("abstaining", True), ("judging every recording", False)):
            decision = decided(shipped(gate, abstain=abstain), gate.cut)
            lines.append(f"| shipped standout gate {shown}, {label} | | {blank} | {decision} |")
        short = " | ".join(
            f"{sum(gate.abstains(r.own) for r in rows)} of {len(rows)}" for rows in sets.values()
        )
        too_short = f"questions on a recording of < {SPREAD_CANDIDATES} candidates"
        lines.append(f"| {too_short} | | {blank} | {short} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--heldout-index", type=Path, nargs=len(HELDOUT_SETS), required=True)
    parser.add_argument("--library-index", type=Path)
    args = parser.parse_args()
    specs = [json.loads(path.read_text()) for path in HELDOUT_SETS]
    media = [ROOT / spec["media"] for spec in specs]
    from llama_index_video.search.policy import STANDOUT_GATES

    examples_index, _ = ours(args.index)
    examples = read_signals(examples_index, load_questions(ROOT / "benchmarks" / "questions.json"))
    library = None
    if args.library_index:
        library, _ = ours(args.library_index)
        for path in media:
            library.ingest([path])
    held_out: dict[str, list[Signals]] = {}
    for path, folder, recording in zip(HELDOUT_SETS, args.heldout_index, media, strict=True):
        questions = load_questions(path)
        name = recording.stem
        alone, _ = ours(folder, recording)
        held_out[f"{name} alone"] = read_signals(alone, questions)
        if library is not None:
            held_out[f"{name} in library"] = read_signals(library, questions)
    gate = STANDOUT_GATES.get(examples_index.identity)
    print("\n".join(table(examples, held_out, gate)))
    print(f"(examples: {EXAMPLES.relative_to(ROOT)}, {len(examples)} questions)")


if __name__ == "__main__":
    main()
