"""Which rejection signal separates answerable questions from near-topic ones, and does
its cut carry over to media it was not fitted on? (issue 10, defect 10)

    python benchmarks/rejection_signals.py --index DIR --heldout-index DIR2 [--library-index DIR3]

The folders are those ``benchmarks/evaluate.py`` builds (``--index``: examples/media;
``--heldout-index``: the tomato narration alone); ``--library-index``, if given, is the
examples index with the narration added, where the held-out questions meet a library
of other recordings. For every question it reads, without the gate: the best cosine of
the top 50 of the text channels, their mean, and the coverage of the best three hits
(:mod:`llama_index_video.answering.relevance`). For each signal it prints the ROC AUC
(how well it ranks answerable above unanswerable, 0.5 is chance) on each set, and the
cut fitted on the examples (answers counted twice) scored on the held-out questions,
beside no gate at all.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.evaluate import ANSWER_WEIGHT, HELDOUT_QUESTIONS, load_questions  # noqa: E402
from benchmarks.scoring import Question, balanced_accuracy, best_cut  # noqa: E402

CANDIDATES = 50
"""As many as search's shared top-k query of the text channels fetches."""
WEIGHTS = (0.0, 0.1, 0.2, 0.3)


@dataclass(frozen=True)
class Signals:
    answerable: bool
    found: bool
    best: float
    typical: float
    coverage: float


def read_signals(index_dir: Path, questions: Sequence[Question]) -> list[Signals]:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from llama_index_video.answering.relevance import Relevance
    from llama_index_video.index import VideoIndex

    index = VideoIndex(index_dir, relevance=None)
    signals = []
    for question in questions:
        vector = index.embed_model.get_query_embedding(question.question)
        result = index.vector_store.query(
            VectorStoreQuery(query_embedding=vector, similarity_top_k=CANDIDATES)
        )
        cosines = result.similarities or [0.0]
        hits = index.search(question.question, top_k=5)
        signals.append(
            Signals(
                answerable=question.kind != "none",
                found=bool(hits),
                best=max(cosines),
                typical=statistics.mean(cosines),
                coverage=Relevance.of(question.question, hits).coverage,
            )
        )
    index.close()
    return signals


Score = Callable[[Signals], float]

BASES: dict[str, Score] = {
    "cosine": lambda s: s.best,
    "margin": lambda s: s.best - s.typical,
    "headroom": lambda s: (s.best - s.typical) / (1 - s.typical),
}


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


def report(fitted_on: list[Signals], held_out: dict[str, list[Signals]]) -> None:
    def line(name: str, rows: Sequence[Signals], score: Score, cut: float) -> str:
        answered, rejected, weighted = rates(rows, score, cut)
        return f"{name} ans {answered:.2f} rej {rejected:.2f} w {weighted:.2f}"

    print(f"{'signal':22} {'AUC examples':>12} " + " ".join(f"{n:>14}" for n in held_out))
    for base_name, base in BASES.items():
        for weight in WEIGHTS:
            score: Score = lambda s, base=base, weight=weight: base(s) + weight * s.coverage  # noqa: E731
            labels = [r.answerable for r in fitted_on]
            cut = best_cut(labels, [score(r) for r in fitted_on], answer_weight=ANSWER_WEIGHT).value
            aucs = " ".join(f"{auc(rows, score):14.3f}" for rows in held_out.values())
            print(f"{base_name} + {weight} x coverage {auc(fitted_on, score):12.3f} {aucs}")
            print(f"    cut {cut:.3f}: " + line("examples", fitted_on, score, cut))
            for name, rows in held_out.items():
                print(f"    {' ' * 10}  " + line(name, rows, score, cut))
    for name, rows in {"examples": fitted_on, **held_out}.items():
        print("no gate: " + line(name, rows, lambda s: 1.0, 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--heldout-index", type=Path, required=True)
    parser.add_argument("--library-index", type=Path)
    args = parser.parse_args()
    examples = load_questions(ROOT / "benchmarks" / "questions.json")
    heldout = load_questions(HELDOUT_QUESTIONS)
    held_out = {"held-out alone": read_signals(args.heldout_index, heldout)}
    if args.library_index:
        held_out["held-out in library"] = read_signals(args.library_index, heldout)
    report(read_signals(args.index, examples), held_out)


if __name__ == "__main__":
    main()
