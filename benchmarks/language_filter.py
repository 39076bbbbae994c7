"""What ``languages=`` (``search --language``) costs a search, and that it keeps its word.

Run from the repository root::

    python benchmarks/language_filter.py [--hours 4] [--queries 40] [--rebuild]

The index is :mod:`benchmarks.synthetic_index`'s (synthetic lectures, pooled vectors,
a frame every 30 s), its recordings labelled English and French in turn (the words stay
English: only the label is searched by). Each query is searched three ways, in turn so
that the machine's load falls on all alike: with no language (the baseline), French
only, and English or French (every moment with a transcript). Printed per way: the
latency of ``VideoIndex.search`` (query embedding included) and how many hits there
were; for French, any hit of an English recording is a failure (exit status 1).

The language is a metadata filter on the vector query (Chroma's ``where``), which on a
large collection is slower than the unfiltered query the search otherwise shares among
its channels (``search/policy.py``), and the lexical channel reads its candidates until
it has enough in the languages asked for (``search/lexical.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.latency_support import SpeechGenerator, summarise  # noqa: E402
from benchmarks.synthetic_index import build, folder_for  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402

LANGUAGES = ("en", "fr")
WAYS = {"any (baseline)": None, "fr": ["fr"], "en+fr": ["en", "fr"]}


def french(source: str) -> bool:
    """Whether a hit's recording is one labelled French (the odd ones)."""
    return int(Path(source).stem.rsplit("_", 1)[1]) % len(LANGUAGES) == 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=4.0, help="hours of transcript")
    parser.add_argument("--queries", type=int, default=40, help="measured queries")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up queries")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    options = {"exact": False, "frame_interval": 30.0, "seed": args.seed}
    folder = folder_for(args.hours, languages=LANGUAGES, **options)
    if args.rebuild or not (folder / "build.json").is_file():
        print(f"building {folder} ...", flush=True)
        build(folder, hours=args.hours, languages=LANGUAGES, **options)
    index = VideoIndex(folder)
    queries = SpeechGenerator(seed=args.seed).queries(args.warmup + args.queries)
    for query in queries[: args.warmup]:
        for languages in WAYS.values():
            index.search(query, languages=languages)
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    hits: dict[str, int] = dict.fromkeys(WAYS, 0)
    wrong = 0
    for query in queries[args.warmup :]:
        for way, languages in WAYS.items():
            started = time.perf_counter()
            found = index.search(query, languages=languages)
            seconds[way].append(time.perf_counter() - started)
            hits[way] += len(found)
            if languages == ["fr"]:
                wrong += sum(not french(hit.source) for hit in found)
    index.close()
    figures = {way: {**vars(summarise(s)), "hits": hits[way]} for way, s in seconds.items()}
    print(f"{args.hours:g} h synthetic index, {args.queries} queries, ms per search:")
    for way, figure in figures.items():
        print(
            f"  {way:15} p50 {figure['p50']:6.1f}  p95 {figure['p95']:6.1f}  hits {figure['hits']}"
        )
    print(f"  French-only hits of English recordings: {wrong}")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "wrong": wrong}, indent=2))
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
