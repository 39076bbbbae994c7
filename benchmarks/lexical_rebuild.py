"""What the lexical index costs as an index grows: recording words, rebuilding, searching.

    python benchmarks/lexical_rebuild.py [--sizes 10000 100000]

For each size, synthetic transcript units (60 words each from a 20,000-word vocabulary
plus a few real words, about the length of a sentence-aware unit) are recorded in a
fresh ``lexical/words.sqlite`` the way ingest records them (batches of 64 nodes), then
the BM25 matrices are rebuilt from them (:meth:`LexicalStore.refresh`), loaded, and
searched by words and by a quoted phrase. These are the figures behind the choice, in
:mod:`llama_index_video.store.lexical`, to rebuild the matrices from the stored words
once per ingest run (and at most once a minute during one) instead of keeping
per-run segments.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llama_index.core.schema import TextNode  # noqa: E402

from llama_index_video import schema  # noqa: E402
from llama_index_video.store.lexical import LexicalStore  # noqa: E402
from llama_index_video.store.tokens import words  # noqa: E402

VOCABULARY = [f"w{i}" for i in range(20_000)] + ["meeting", "budget", "practice", "gym", "floor"]
UNIT_WORDS = 60
BATCH = 64


def units(count: int, seed: int = 0) -> list[TextNode]:
    rng = random.Random(seed)
    return [
        TextNode(
            id_=f"unit-{i:07d}",
            text=" ".join(rng.choice(VOCABULARY) for _ in range(UNIT_WORDS)),
            metadata={schema.CONTENT_HASH: f"content-{i // 200}", schema.MODALITY: "transcript"},
        )
        for i in range(count)
    ]


def measure(count: int) -> dict[str, float]:
    nodes = units(count)
    with tempfile.TemporaryDirectory(prefix="lexical-") as folder:
        store = LexicalStore(Path(folder))
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            store.add(nodes[start : start + BATCH])
        recorded = time.perf_counter() - started
        started = time.perf_counter()
        store.refresh()
        rebuilt = time.perf_counter() - started
        started = time.perf_counter()
        snapshot = store.snapshot()
        loaded = time.perf_counter() - started
        assert snapshot is not None
        query = words("who booked the gym floor for the budget meeting")
        started = time.perf_counter()
        for _ in range(10):
            snapshot.search(query, top_k=50)
        searched = (time.perf_counter() - started) / 10
        started = time.perf_counter()
        for _ in range(10):
            store.with_phrases([["gym", "floor"]], among=snapshot.holding(["gym", "floor"]))
        phrased = (time.perf_counter() - started) / 10
        size = sum(p.stat().st_size for p in store.folder.rglob("*") if p.is_file())
    return {
        "record (s)": recorded,
        "rebuild (s)": rebuilt,
        "load (s)": loaded,
        "search (ms)": searched * 1000,
        "phrase (ms)": phrased * 1000,
        "folder (MB)": size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    rows = {size: measure(size) for size in args.sizes}
    columns = list(next(iter(rows.values())))
    print(f"{'units':>8} " + " ".join(f"{c:>12}" for c in columns))
    for size, figures in rows.items():
        print(f"{size:>8} " + " ".join(f"{figures[c]:>12.2f}" for c in columns))


if __name__ == "__main__":
    main()
