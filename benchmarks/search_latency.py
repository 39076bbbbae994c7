"""Search latency on a synthetic index of 100 hours of transcript (issue 3).

Run from the repository root::

    python benchmarks/search_latency.py [--hours 100] [--queries 200] [--rebuild]
                                        [--exact-embeddings] [--threads N] [--profile N]
                                        [--json FILE]

The index folder (:mod:`benchmarks.synthetic_index`) is built the way
``VideoIndex.ingest`` builds one, minus the media:
synthetic speech (:mod:`benchmarks.latency_support`) becomes ``Segment``s, the
library's ``build_units`` regroups them into transcript units, ``transcript_nodes``
and ``frame_node`` make the nodes (a frame every ``--frame-interval`` seconds, all
pointing at one shared small JPEG) and ``link_moments`` links units and frames as
``VideoReader`` does, ``VectorStoreIndex.insert_nodes`` adds them to
the folder's Chroma collection, and the manifest gets the identity meta and one
``indexed`` file record per recording (content hash: sha256 of the recording's name;
an empty placeholder file stands for the recording). ``VideoIndex(folder)`` opens it.

Vectors. Embedding ~48k node texts with all-MiniLM-L6-v2 on two shared CPU cores
takes from several minutes to over an hour, so by default speech is drawn from a
pool of ~3,600 distinct sentences, each embedded once with the real model, and a
node's vector is the normalised sum of its sentences' vectors: every node vector is
distinct, in the model's space, and close to what the model gives for the node's
text (the build measures the cosine between the two on a sample and reports it).
``--exact-embeddings`` embeds every node's text with the model instead, through
``insert_nodes`` as the real ingest does. Built folders are cached under
``benchmarks/.cache/search_latency/`` and reused; ``--rebuild`` builds afresh. The
build runs in a child process, so the peak RSS reported is that of searching.

Measured per query, each variant in its own pass after the same warm-up queries
(:mod:`benchmarks.search_timing`):

(a) retrieval + postprocessing, the query embedding excluded: the steps of
    ``VideoIndex.search`` (``as_retriever``, the fused retrieval, ``postprocessor()
    .postprocess_nodes``, ``hit_from_node``) with the fused retriever's channels given
    a ``PrecomputedEmbedding`` that looks the query's vector up: ``FusionRetriever``
    takes the vector from its channels' model, not from the ``QueryBundle``. A counter
    of the real model's calls (LlamaIndex instrumentation) checks that it stays idle,
    and every query's hits are compared with those of (b). Also split into stages, and
    into the queries that found something and those that found nothing.
(b) ``VideoIndex.search(query)``, query embedding included.
(c) the raw Chroma ``collection.query``: the top k and the candidates the text channels
    share (``MIN_CANDIDATES``/``CANDIDATES_PER_HIT`` of ``search/policy.py``), both unfiltered,
    and the top k with a modality filter, as per-modality channels used to ask.
(d) each distinct retriever behind the channels (Chroma query + LlamaIndex nodes).
(e) the query embedding alone.
(f) ``VideoIndex.search(query)`` with the standout relevance gate on
    (``relevance="standout"``), query embedding included: (b) plus the gate's vector
    query of the best moment's recording; with the share of queries it let through.

``--threads N`` embeds the queries on N ONNX Runtime intra-op threads (``serve`` uses
one) instead of ONNX Runtime's default of one per core.

``--profile N`` runs cProfile over (a) for N of the queries that found something and
saves the stats beside the cache. ``--quick`` measures (a), (b) and (e) only.

``--baseline-ref REF --rounds N`` compares today's code with the commit ``REF`` (e.g.
``main`` before a change; exported by :mod:`benchmarks.baseline`) in the same run: each
round runs ``--quick`` once per version, each in its own process and the order
alternating, on the same cached index, and reports the per-round p50s, their medians,
the ratio, and whether both versions returned the same hits for every query.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import QueryBundle

from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
from llama_index_video.index import VideoIndex

# The reader's limit on the speech a frame's text quotes (private; used as is).
from llama_index_video.search.policy import CANDIDATES_PER_HIT, MIN_CANDIDATES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.latency_support import LatencySummary, SpeechGenerator, summarise  # noqa: E402
from benchmarks.search_timing import (  # noqa: E402
    EmbeddingCalls,
    Measurement,
    PrecomputedEmbedding,
    Variant,
    profile_precomputed,
    run_pass,
    search_precomputed,
)
from benchmarks.synthetic_index import (  # noqa: E402
    CACHE,
    BuildInfo,
    build,
    build_flags,
    folder_for,
    peak_rss_mb,
)

if TYPE_CHECKING:
    from llama_index_video.results import SearchHit

TARGET_P50_MS = 50.0
ISSUE_13_BASELINE_MS = 41.6  # (b) on 0.1.0, as issue 13 reports it
ISSUE_13_TARGET_MS = ISSUE_13_BASELINE_MS / 2


# ------------------------------------------------------------------------------ building


def ensure_built(args: argparse.Namespace) -> tuple[Path, BuildInfo, bool]:
    """The cached folder for these options, built in a child process when missing.

    Returns:
        The folder, its build info, and whether it was built by this run.
    """
    folder = folder_for(
        args.hours, exact=args.exact_embeddings, frame_interval=args.frame_interval, seed=args.seed
    )
    marker = folder / "build.json"
    built = False
    if args.rebuild or not marker.is_file():
        print(f"building {folder} in a child process ...", flush=True)
        command = [sys.executable, __file__, "--build-only", *build_flags(args)]
        subprocess.run(command, check=True)
        built = True
    return folder, BuildInfo(**json.loads(marker.read_text())), built


# ----------------------------------------------------------------------------- measuring


def measure(
    folder: Path,
    *,
    queries: int,
    warmup: int,
    top_k: int,
    seed: int,
    threads: int | None,
    quick: bool = False,
) -> tuple[Measurement, VideoIndex, list[str], PrecomputedEmbedding]:
    """Open the index and time every variant (see the module docstring); ``quick``:
    only (a), (b) and (e)."""
    started = time.perf_counter()
    video_index = VideoIndex(folder)
    open_seconds = time.perf_counter() - started
    if video_index.visual_model is not None:
        raise SystemExit(f"{folder} has visual search; this benchmark covers text search only")
    model = video_index.embed_model
    if threads is not None:
        if not isinstance(model, OnnxSentenceEmbedding):
            raise SystemExit(f"--threads needs the ONNX embedding; {folder} uses {model}")
        model.use_threads(threads)
    calls = EmbeddingCalls(model.class_name())
    texts = SpeechGenerator(seed=seed).queries(warmup + queries)
    warm, measured = range(warmup), range(warmup, warmup + queries)
    precomputed = PrecomputedEmbedding()
    collection = video_index.vector_store.client  # the chromadb Collection
    channels = video_index.as_retriever(top_k=top_k).channels
    shared: dict[int, tuple[BaseRetriever, list[str]]] = {}  # retrievers and their channels
    for channel in channels:
        shared.setdefault(id(channel.retriever), (channel.retriever, []))[1].append(channel.name)
    candidates = max(MIN_CANDIDATES, CANDIDATES_PER_HIT * top_k)  # what the shared one asks

    def embed(i: int) -> None:
        precomputed.vectors[texts[i]] = model.get_query_embedding(texts[i])

    def raw_query(count: int) -> Callable[[int], None]:
        def run(i: int) -> None:
            collection.query(query_embeddings=[precomputed.vectors[texts[i]]], n_results=count)

        return run

    def raw_filtered_query(i: int) -> None:
        where = {"modality": {"$in": ["transcript"]}}  # a VideoRetriever's modality filter
        vector = precomputed.vectors[texts[i]]
        collection.query(query_embeddings=[vector], n_results=top_k, where=where)

    def retriever_query(retriever: BaseRetriever) -> Callable[[int], None]:
        def run(i: int) -> None:
            retriever.retrieve(QueryBundle(texts[i], embedding=precomputed.vectors[texts[i]]))

        return run

    hits_a: dict[int, list[SearchHit]] = {}
    hits_b: dict[int, list[SearchHit]] = {}

    def run_a(i: int) -> dict[str, float]:
        hits_a[i], stages = search_precomputed(video_index, texts[i], precomputed, top_k=top_k)
        return stages

    def run_b(i: int) -> None:
        hits_b[i] = video_index.search(texts[i], top_k=top_k)

    gated = None if quick else VideoIndex(folder, embed_model=model, relevance="standout")
    hits_f: dict[int, list[SearchHit]] = {}

    def run_f(i: int) -> None:
        assert gated is not None
        hits_f[i] = gated.search(texts[i], top_k=top_k)

    variants: list[tuple[Variant, Callable[[int], dict[str, float] | None]]] = [
        (Variant("(a) retrieval + postprocessing, embedding excluded", split_by_hits=True), run_a),
        (Variant("(b) VideoIndex.search, embedding included", split_by_hits=True), run_b),
    ]
    variants += (
        []
        if quick
        else [
            (Variant(f"(c) raw Chroma query, top {top_k}, no filter"), raw_query(top_k)),
            (Variant(f"(c) raw Chroma query, top {candidates}, no filter"), raw_query(candidates)),
            (Variant(f"(c) raw Chroma query, top {top_k}, transcript filter"), raw_filtered_query),
            *(
                (
                    Variant(f"(d) {type(r).__name__} serving {len(names)} channel(s)"),
                    retriever_query(r),
                )
                for r, names in shared.values()
            ),
            (Variant("(f) VideoIndex.search, standout gate on", split_by_hits=True), run_f),
        ]
    )
    variants.append((Variant("(e) query embedding alone"), embed))
    embedding, embed_call = variants[-1]
    run_pass(embedding, embed_call, [*warm, *measured], (), calls)  # vectors for all
    embedding.seconds = embedding.seconds[warmup:]
    for variant, call in variants[2:-1] + variants[:2]:
        run_pass(variant, call, measured, warm, calls)
    if gated is not None:
        gated.close()

    before = calls.count
    vector = precomputed.vectors[texts[0]]
    video_index.as_retriever(top_k=top_k).retrieve(QueryBundle(texts[0], embedding=vector))
    measurement = Measurement(
        variants=[v for v, _ in variants],
        queries=queries,
        answered_flags=[bool(hits_a[i]) for i in measured],
        warmup=warmup,
        answered=sum(1 for i in measured if hits_a[i]),
        mean_hits=sum(len(hits_a[i]) for i in measured) / queries,
        mismatches=sum(1 for i in measured if _key(hits_a[i]) != _key(hits_b[i])),
        gate_passed=None if quick else sum(1 for i in measured if hits_f[i]),
        fusion_embeds_given_vector=calls.count - before,
        open_seconds=open_seconds,
        threshold=video_index.threshold,
        channels=[c.name for c in channels],
        found=[_key(hits_b[i]) for i in measured],
    )
    answered = [texts[i] for i in measured if hits_a[i]]
    return measurement, video_index, answered, precomputed


def _key(hits: Sequence[SearchHit]) -> list[tuple[str, str, float | None]]:
    return [(hit.label, hit.modality, hit.score) for hit in hits]


# ------------------------------------------------------------------------------ reporting


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    memory_gb = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory_gb = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    versions = {
        name: importlib.metadata.version(name)
        for name in ("chromadb", "llama-index-core", "llama-index-vector-stores-chroma")
    }
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        **versions,
    }


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1024**2


Row = tuple[str, LatencySummary, LatencySummary | None]  # name, wall clock, CPU time


def table(rows: Iterable[Row]) -> str:
    header = f"{'ms':<58}{'mean':>8}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}{'CPU p50':>9}"
    lines = [header]
    for name, s, cpu in rows:
        cpu_p50 = f"{cpu.p50:9.1f}" if cpu else ""
        lines.append(
            f"{name:<58}{s.mean:8.1f}{s.p50:8.1f}{s.p95:8.1f}{s.p99:8.1f}{s.max:8.1f}{cpu_p50}"
        )
    return "\n".join(lines)


def report(
    info: BuildInfo,
    measurement: Measurement,
    *,
    folder: Path,
    built_now: bool,
    load: tuple[tuple[float, ...], tuple[float, ...]],
) -> dict[str, Any]:
    host = machine()
    first = measurement.variants[0]
    p50 = summarise(first.seconds).p50
    rows: list[Row] = []
    flags = measurement.answered_flags
    for variant in measurement.variants:
        rows.append((variant.name, summarise(variant.seconds), summarise(variant.cpu_seconds)))
        if variant.split_by_hits and 0 < sum(flags) < len(flags):
            for wanted, label in ((True, "with"), (False, "without")):
                chosen = [s for s, f in zip(variant.seconds, flags, strict=True) if f is wanted]
                rows.append((f"    {len(chosen)} queries {label} hits", summarise(chosen), None))
        rows.extend((f"    {stage}", summarise(s), None) for stage, s in variant.stages.items())
    fidelity = "".join(
        f"; {modality} nodes: pooled-vs-model cosine mean {f['mean']:.3f}, min {f['min']:.3f}"
        for modality, f in info.fidelity.items()
    )
    print()
    print(
        f"index: {info.hours:g} h in {info.recordings} recordings, "
        f"{info.transcript_nodes:,} transcript + {info.frame_nodes:,} frame nodes "
        f"(a frame every {info.frame_interval:g} s), {info.sentences:,} sentences"
    )
    print(
        f"vectors: {info.vectors} ({info.distinct_sentences_embedded:,} distinct sentences "
        f"embedded){fidelity}"
    )
    print(
        f"build: {info.build_seconds:.0f} s (embedding {info.embed_seconds:.0f} s, insert "
        f"{info.insert_seconds:.0f} s, peak RSS {info.peak_rss_mb:.0f} MB), "
        f"{'built by this run' if built_now else 'cached from ' + info.built_at}; "
        f"{folder_mb(folder):.0f} MB on disk"
    )
    print(
        f"machine: {host['usable_cores']} of {host['cores']} cores, {host['cpu']}, "
        f"{host['memory_gb']} GB; load average (1/5/15 min) {_load(load[0])} before, "
        f"{_load(load[1])} after"
    )
    print(
        f"software: Python {host['python']}, chromadb {host['chromadb']}, "
        f"llama-index-core {host['llama-index-core']}"
    )
    print(
        f"search: {measurement.queries} queries after {measurement.warmup} warm-up, top_k 5, "
        f"threshold {measurement.threshold}, channels {', '.join(measurement.channels)}; "
        f"{measurement.answered} answered, {measurement.mean_hits:.1f} moments per query"
    )
    print(
        f"opening VideoIndex (model load included): {measurement.open_seconds:.1f} s; "
        f"peak RSS of this process {peak_rss_mb():.0f} MB"
    )
    print()
    print(table(rows))
    print()
    print(
        f"embedding calls: (a) {first.embedding_calls}, "
        f"(b) {measurement.variants[1].embedding_calls}"
        f" for {measurement.queries} queries; FusionRetriever.retrieve(QueryBundle(embedding=v)) "
        f"made {measurement.fusion_embeds_given_vector} call(s)"
    )
    print(f"(a) and (b) returned different hits for {measurement.mismatches} queries")
    print(
        f"(f) the standout gate let {measurement.gate_passed} of the {measurement.answered} "
        "answered queries through"
    )
    verdict = "met" if p50 < TARGET_P50_MS else "NOT met"
    print(f"target p50 of (a) under {TARGET_P50_MS:.0f} ms: {verdict} ({p50:.1f} ms)")
    searched = summarise(measurement.variants[1].seconds).p50
    verdict = "met" if searched <= ISSUE_13_TARGET_MS else "NOT met"
    print(
        f"issue 13: p50 of (b) at most {ISSUE_13_TARGET_MS} ms (half of 0.1.0's "
        f"{ISSUE_13_BASELINE_MS} ms): {verdict} ({searched:.1f} ms)"
    )
    return {
        "build": asdict(info),
        "machine": host,
        "load_before": load[0],
        "load_after": load[1],
        "peak_rss_mb": peak_rss_mb(),
        "measurement": {
            k: v for k, v in asdict(measurement).items() if k not in ("variants", "found")
        },
        "found": measurement.found,
        "latency_ms": [
            {"row": name, **asdict(wall), "cpu_p50": cpu.p50 if cpu else None}
            for name, wall, cpu in rows
        ],
    }


@dataclass(frozen=True)
class Round:
    """One version's ``--quick`` figures in one round of ``--baseline-ref``, in ms."""

    retrieval_p50: float  # (a)
    search_p50: float  # (b)
    search_cpu_p50: float
    embedding_p50: float  # (e)
    load: float  # 1-minute load average when the child started


def side_by_side(args: argparse.Namespace) -> int:
    """Today's code and ``--baseline-ref`` in alternating child processes (module docstring)."""
    from benchmarks.baseline import release, run, today

    baseline = release(args.baseline_ref)
    label = f"{args.baseline_ref} ({baseline.source.name.removeprefix('baseline-')[:7]})"
    versions = [today(), replace(baseline, name=label)]
    rounds: dict[str, list[Round]] = {v.name: [] for v in versions}
    found: dict[str, list[Any]] = {}
    flags = ["--quick", "--queries", str(args.queries), "--warmup", str(args.warmup)]
    flags += ["--top-k", str(args.top_k), *build_flags(args)]
    flags += ["--threads", str(args.threads)] if args.threads else []
    for number in range(args.rounds):
        for version in versions if number % 2 == 0 else versions[::-1]:
            with tempfile.TemporaryDirectory() as scratch:
                written = Path(scratch) / "result.json"
                load = os.getloadavg()[0]
                command = [sys.executable, str(Path(__file__).resolve()), *flags]
                done = run([*command, "--json", str(written)], version.env(), timeout=3600)
                if done.returncode != 0:
                    raise SystemExit(f"{version.name} failed:\n{done.stderr[-3000:]}")
                result = json.loads(written.read_text())
            rows = {row["row"][:3]: row for row in result["latency_ms"]}
            rounds[version.name].append(
                Round(
                    rows["(a)"]["p50"],
                    rows["(b)"]["p50"],
                    rows["(b)"]["cpu_p50"],
                    rows["(e)"]["p50"],
                    load,
                )
            )
            found[version.name] = result["found"]
            print(f"round {number + 1} {version.name}: {rounds[version.name][-1]}", flush=True)
    print()
    print(f"{args.queries} queries per run, p50 ms per round (load average), then the median:")
    header = "(a) retrieval", "(b) search", "(b) CPU", "(e) embedding"
    print(f"{'version':<24}" + "".join(f"{h:>16}" for h in header))
    medians = {}
    for name, measured in rounds.items():
        columns = list(
            zip(
                *(
                    (r.retrieval_p50, r.search_p50, r.search_cpu_p50, r.embedding_p50)
                    for r in measured
                ),
                strict=True,
            )
        )
        medians[name] = [statistics.median(c) for c in columns]
        for r in measured:
            print(
                f"{'':<24}{r.retrieval_p50:16.1f}{r.search_p50:16.1f}{r.search_cpu_p50:16.1f}"
                f"{r.embedding_p50:16.1f}   (load {r.load:.1f})"
            )
        print(f"{name:<24}" + "".join(f"{m:16.1f}" for m in medians[name]))
    today_name, baseline_name = (v.name for v in versions)
    ratios = [b / t for t, b in zip(medians[today_name], medians[baseline_name], strict=True)]
    print(f"{'baseline / today':<24}" + "".join(f"{r:15.2f}x" for r in ratios))
    same = found[today_name] == found[baseline_name]
    print(f"same hits for every query: {'yes' if same else 'NO'}")
    verdict = "met" if medians[today_name][1] <= ISSUE_13_TARGET_MS else "NOT met"
    print(
        f"issue 13: (b) at most {ISSUE_13_TARGET_MS} ms (half of 0.1.0's "
        f"{ISSUE_13_BASELINE_MS} ms): {verdict} ({medians[today_name][1]:.1f} ms today)"
    )
    return 0 if same else 1


def _load(values: Sequence[float]) -> str:
    return "/".join(f"{v:.1f}" for v in values)


# ---------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=100.0, help="hours of transcript")
    parser.add_argument("--queries", type=int, default=200, help="measured queries")
    parser.add_argument("--warmup", type=int, default=10, help="warm-up queries per variant")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--frame-interval", type=float, default=30.0, help="seconds")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    parser.add_argument(
        "--exact-embeddings", action="store_true", help="embed every node with the model"
    )
    parser.add_argument(
        "--threads", type=int, default=None, metavar="N", help="query embedding threads"
    )
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="cProfile (a) over N queries"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--quick", action="store_true", help="measure (a), (b) and (e) only")
    parser.add_argument(
        "--baseline-ref", metavar="REF", help="compare with this commit, rounds alternating"
    )
    parser.add_argument("--rounds", type=int, default=4, help="rounds of --baseline-ref")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.hours <= 0 or args.queries < 1 or args.warmup < 0 or args.frame_interval <= 0:
        parser.error("--hours, --queries and --frame-interval must be positive")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.build_only:
        folder = folder_for(
            args.hours,
            exact=args.exact_embeddings,
            frame_interval=args.frame_interval,
            seed=args.seed,
        )
        info = build(
            folder,
            hours=args.hours,
            exact=args.exact_embeddings,
            frame_interval=args.frame_interval,
            seed=args.seed,
        )
        print(f"built {folder} in {info.build_seconds:.0f} s", flush=True)
        return 0
    folder, info, built_now = ensure_built(args)
    if args.baseline_ref:
        return side_by_side(args)
    load_before = os.getloadavg()
    measurement, video_index, texts, precomputed = measure(
        folder,
        queries=args.queries,
        warmup=args.warmup,
        top_k=args.top_k,
        seed=args.seed,
        threads=args.threads,
        quick=args.quick,
    )
    load_after = os.getloadavg()
    results = report(
        info, measurement, folder=folder, built_now=built_now, load=(load_before, load_after)
    )
    if args.profile:
        count = min(args.profile, len(texts))
        print(f"\ncProfile of (a) over {count} queries ({CACHE / 'search_precomputed.pstats'}):")
        print(profile_precomputed(video_index, texts[:count], precomputed, top_k=args.top_k))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    video_index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
