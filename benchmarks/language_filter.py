"""What ``languages=`` (``search --language``) costs a search, and that it keeps its word.

Run from the repository root::

    python benchmarks/language_filter.py [--hours 4] [--queries 40] [--rebuild]
        [--french-every 2] [--baseline-ref REF --rounds 2]

The index is :mod:`benchmarks.synthetic_index`'s (synthetic lectures, pooled vectors,
a frame every 30 s), its recordings labelled English but every ``--french-every``-th
French (every other one by default; 10: a language said rarely; the words stay English:
only the label is searched by). That builder stores vectors only (as
LlamaIndex's ``insert_nodes`` does), so the words of its nodes are recorded in the
lexical index here, as ``verify --repair`` records them (:func:`with_words`): the
lexical channel searches as after an ``ingest``. Each query is searched three ways, in
turn so that the machine's load falls on all alike: with no language (the baseline),
French only, and English or French (every moment with a transcript). Printed per way:
the latency of ``VideoIndex.search`` (query embedding included) and how many hits there
were; for French, any hit of an English recording is a failure (exit status 1).

With ``--baseline-ref REF`` the same measurement runs in child processes, today's code
and ``REF``'s (exported by :mod:`benchmarks.baseline`) alternating for ``--rounds``
rounds on the same folder, and the figures are pooled per version.

The language is a metadata filter on the vector query (Chroma's ``where``), which on a
large collection is slower than the unfiltered query the search otherwise shares among
its channels (``search/policy.py``), and on the lexical channel a filter of its matrices
before ranking (``store/bm25.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llama_index.core import QueryBundle  # noqa: E402

from benchmarks.baseline import load_average, release, run, today  # noqa: E402
from benchmarks.latency_support import SpeechGenerator, summarise  # noqa: E402
from benchmarks.synthetic_index import build, folder_for  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402

LANGUAGES = ("en", "fr")
WAYS = {"any (baseline)": None, "fr": ["fr"], "en+fr": ["en", "fr"]}


def labels(every: int) -> tuple[str, ...]:
    """The language of recording ``i`` is ``labels(every)[i % every]``: every
    ``every``-th one French, the others English."""
    return (*[LANGUAGES[0]] * (every - 1), LANGUAGES[1])


def french(source: str, every: int = 2) -> bool:
    """Whether a hit's recording is one labelled French (see :func:`labels`)."""
    return int(Path(source).stem.rsplit("_", 1)[1]) % every == every - 1


def with_words(folder: Path) -> None:
    """Record the words of the folder's stored nodes in its lexical index, as ``verify
    --repair`` does (nothing when they are there already)."""
    from llama_index_video.store.collection import content_nodes
    from llama_index_video.store.lexical import check_lexical, repair_lexical

    index = VideoIndex(folder)
    try:
        indexed = {r.content_hash: r.node_count for r in index.manifest.files("indexed")}
        check = check_lexical(index.lexical, indexed)
        if not check.ok:
            print(f"recording the words of {len(indexed)} recordings ({check}) ...", flush=True)
            store = index.vector_store
            repair_lexical(index.lexical, check, lambda key: content_nodes(store, key))
    finally:
        index.close()


def _per_way() -> dict[str, list[float]]:
    return {way: [] for way in WAYS}


@dataclass
class Measured:
    """One version's searches, per way: seconds per search and hits, and the lexical
    channel's alone: seconds per query and rows read; French-only hits of English
    recordings; and where the package measured was imported from."""

    seconds: dict[str, list[float]] = field(default_factory=_per_way)
    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WAYS, 0))
    lexical_seconds: dict[str, list[float]] = field(default_factory=_per_way)
    rows_read: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WAYS, 0))
    wrong: int = 0
    package: str = ""

    def add(self, other: Measured) -> None:
        for way in WAYS:
            self.seconds[way] += other.seconds[way]
            self.hits[way] += other.hits[way]
            self.lexical_seconds[way] += other.lexical_seconds[way]
            self.rows_read[way] += other.rows_read[way]
        self.wrong += other.wrong
        self.package = other.package


class _Counted:
    """The stored nodes by id, as the search reads them, counting the ids asked for."""

    def __init__(self, index: VideoIndex) -> None:
        self.index = index
        self.read = 0

    def __call__(self, ids: list[str]) -> list[Any]:
        from llama_index_video.store.folder_index import nodes_by_id

        self.read += len(ids)
        return nodes_by_id(self.index.index, ids)


def lexical_alone(index: VideoIndex, query: str, languages: list[str] | None) -> int:
    """The lexical channel as ``VideoIndex.search`` builds it for ``top_k`` 5 (its
    candidates, threshold and filters), run alone; returns the rows it read."""
    from llama_index_video.search.lexical import LEXICAL_THRESHOLD, LexicalRetriever
    from llama_index_video.search.policy import CANDIDATES_PER_HIT, MIN_CANDIDATES

    rows = _Counted(index)
    LexicalRetriever(
        index.lexical,
        rows,
        top_k=max(MIN_CANDIDATES, CANDIDATES_PER_HIT * 5),
        languages=languages,
        threshold=LEXICAL_THRESHOLD,
    ).retrieve(QueryBundle(query))
    return rows.read


def measure(folder: Path, *, queries: list[str], warmup: int, every: int) -> Measured:
    """Each query searched every way (module docstring), after ``warmup`` of them."""
    import llama_index_video

    index = VideoIndex(folder)
    for query in queries[:warmup]:
        for languages in WAYS.values():
            index.search(query, languages=languages)
    measured = Measured(package=str(Path(llama_index_video.__file__).parent))
    for query in queries[warmup:]:
        for way, languages in WAYS.items():
            started = time.perf_counter()
            found = index.search(query, languages=languages)
            measured.seconds[way].append(time.perf_counter() - started)
            measured.hits[way] += len(found)
            if languages == ["fr"]:
                measured.wrong += sum(not french(hit.source, every) for hit in found)
            started = time.perf_counter()
            measured.rows_read[way] += lexical_alone(index, query, languages)
            measured.lexical_seconds[way].append(time.perf_counter() - started)
    index.close()
    return measured


def side_by_side(args: argparse.Namespace) -> dict[str, Measured]:
    """Today's code and ``--baseline-ref``'s, in child processes alternating round by
    round (``--child``), each version's searches pooled over its rounds."""
    baseline = release(args.baseline_ref)
    label = f"{args.baseline_ref} ({baseline.source.name.removeprefix('baseline-')[:7]})"
    versions = [today(), replace(baseline, name=label)]
    flags = ["--hours", f"{args.hours:g}", "--queries", str(args.queries)]
    flags += ["--warmup", str(args.warmup), "--seed", str(args.seed)]
    flags += ["--french-every", str(args.french_every)]
    pooled = {version.name: Measured() for version in versions}
    for number in range(args.rounds):
        for version in versions if number % 2 == 0 else versions[::-1]:
            with tempfile.TemporaryDirectory() as scratch:
                written = Path(scratch) / "result.json"
                command = [sys.executable, str(Path(__file__).resolve()), *flags, "--child"]
                env = version.env()  # this checkout's benchmarks after the version's package
                env["PYTHONPATH"] = os.pathsep.join([str(version.source), str(ROOT)])
                done = run([*command, "--json", str(written)], env, timeout=3600)
                if done.returncode != 0:
                    raise SystemExit(f"{version.name} failed:\n{done.stderr[-3000:]}")
                result = Measured(**json.loads(written.read_text()))
            if not result.package.startswith(str(version.source)):
                raise SystemExit(f"{version.name} measured the package in {result.package}")
            p50 = "  ".join(f"{w} {summarise(s).p50:.1f}" for w, s in result.seconds.items())
            print(
                f"round {number + 1}: {version.name}: p50 ms {p50} (load {load_average()})",
                flush=True,
            )
            pooled[version.name].add(result)
    return pooled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=4.0, help="hours of transcript")
    parser.add_argument("--queries", type=int, default=40, help="measured queries")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up queries")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    parser.add_argument(
        "--french-every", type=int, default=2, help="label every N-th recording French"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--baseline-ref", metavar="REF", help="compare with this commit, rounds alternating"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --baseline-ref")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    options = {"exact": False, "frame_interval": 30.0, "seed": args.seed}
    if args.french_every < 2:
        parser.error("--french-every must be at least 2")
    every = args.french_every
    languages = labels(every)
    folder = folder_for(args.hours, languages=languages, **options)
    queries = SpeechGenerator(seed=args.seed).queries(args.warmup + args.queries)
    if args.child:  # one round of --baseline-ref: the folder is ready
        args.json.write_text(
            json.dumps(asdict(measure(folder, queries=queries, warmup=args.warmup, every=every)))
        )
        return 0
    if args.rebuild or not (folder / "build.json").is_file():
        print(f"building {folder} ...", flush=True)
        build(folder, hours=args.hours, languages=languages, **options)
    with_words(folder)  # by today's code, in the format every version reads
    started_load = load_average()
    if args.baseline_ref:
        results = side_by_side(args)
    else:
        results = {"today": measure(folder, queries=queries, warmup=args.warmup, every=every)}
    print(
        f"{args.hours:g} h synthetic index, every {every}-th recording French, "
        f"{args.queries} queries per round, ms per search"
    )
    print(f"(load average {started_load} at the start, {load_average()} at the end):")
    for name, result in results.items():
        print(f"  {name}:")
        for way, seconds in result.seconds.items():
            figure, alone = summarise(seconds), summarise(result.lexical_seconds[way])
            print(
                f"    {way:15} p50 {figure.p50:6.1f}  p95 {figure.p95:6.1f}  "
                f"hits {result.hits[way]:5}  | lexical channel alone: p50 {alone.p50:5.1f}  "
                f"p95 {alone.p95:5.1f}  rows read {result.rows_read[way]}"
            )
        print(f"    French-only hits of English recordings: {result.wrong}")
    if args.json:
        figures = {
            name: {
                way: {
                    **vars(summarise(seconds)),
                    "hits": result.hits[way],
                    "lexical": vars(summarise(result.lexical_seconds[way])),
                    "rows_read": result.rows_read[way],
                }
                for way, seconds in result.seconds.items()
            }
            | {"wrong": result.wrong}
            for name, result in results.items()
        }
        args.json.write_text(json.dumps(figures, indent=2))
    return 1 if any(result.wrong for result in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
