"""What the confidence and the relevance gate add to a warm search (issue 35).

    python benchmarks/gate_cost.py [--index DIR] [--rounds 5]

Over one index folder (``--index``: built from ``examples/media`` if it does not exist;
ingest is incremental, so a reused folder is quick), every question of
``benchmarks/questions.json`` and ``questions_users_examples.json`` is searched warm
with ``--relevance off`` (no gate, no confidence: ``relevance=None`` and no
calibration) and with the defaults (each hit's confidence and the gate), the two
alternating query by query in the same run, ``--rounds`` times. Printed: the p50 and
p95 of each, their difference, and the confidence computation alone
(``Calibration.confidences`` on the same hits, with the question's words absent from
the index), which is what the gate adds. Last, what making the index's
:class:`~llama_index_video.search.relevance.Vocabulary` costs, once per generation of
the lexical index: on this index, and on a made-up vocabulary of 200,000 words.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.evaluate import load_questions, ours  # noqa: E402
from benchmarks.long_speech import percentile  # noqa: E402
from llama_index_video.search.relevance import Vocabulary  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="index folder of examples/media")
    parser.add_argument("--rounds", type=int, default=5, choices=range(1, 51), metavar="1-50")
    args = parser.parse_args()
    from llama_index_video.index import VideoIndex

    default, _ = ours(args.index)
    off = VideoIndex(default.path, embed_model=default.embed_model, relevance=None)
    off.calibration = None  # what --relevance off costs without the confidence either
    calibration = default.calibration
    if calibration is None:
        raise SystemExit(f"no calibration for {default.identity}")
    policy = default.search_policy()
    questions = [
        q.question
        for name in ("questions.json", "questions_users_examples.json")
        for q in load_questions(BENCHMARKS / name)
    ]
    for question in questions[:10]:  # warm both: models, store, caches
        default.search(question)
        off.search(question)
    times: dict[str, list[float]] = {"off": [], "default": [], "confidence alone": []}
    print(f"load before: {load_average()}")
    for _ in range(args.rounds):
        for question in questions:
            for name, index in (("off", off), ("default", default)):
                started = time.perf_counter()
                hits = index.search(question)
                times[name].append(time.perf_counter() - started)
            hits = off.search(question)
            started = time.perf_counter()
            words = policy.vocabulary()
            absent = words.absent(question) if words is not None else 0.0
            calibration.confidences(question, hits, [h.score for h in hits], absent=absent)
            times["confidence alone"].append(time.perf_counter() - started)
    print(f"load after: {load_average()}")
    print(f"{len(questions)} questions x {args.rounds} rounds, warm, top 5")
    print("| search | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for name, values in times.items():
        ms = [1000 * v for v in values]
        print(f"| {name} | {statistics.median(ms):.2f} | {percentile(ms, 0.95):.2f} |")
    added = [1000 * (d - o) for d, o in zip(times["default"], times["off"], strict=True)]
    print(f"default - off, per query: p50 {statistics.median(added):+.2f} ms")
    snapshot = default.lexical.snapshot()
    if snapshot is not None:
        started = time.perf_counter()
        made = Vocabulary.of(snapshot.frequencies, len(snapshot.ids))
        print(
            f"vocabulary of this index ({len(made.stems)} stems): "
            f"{1000 * (time.perf_counter() - started):.2f} ms, once per lexical generation"
        )
    large = {f"w{i:06d}x": 1 + i % 50 for i in range(200_000)}
    started = time.perf_counter()
    Vocabulary.of(large, 1_000_000)
    print(f"vocabulary of 200,000 words: {1000 * (time.perf_counter() - started):.0f} ms, once")
    default.close()
    off.close()


if __name__ == "__main__":
    main()
