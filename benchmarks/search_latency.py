"""Search latency on a synthetic index of 100 hours of transcript (issue 3).

Run from the repository root::

    python benchmarks/search_latency.py [--hours 100] [--queries 200] [--rebuild]
                                        [--exact-embeddings] [--threads N] [--profile N]
                                        [--json FILE]

The index folder is built the way ``VideoIndex.ingest`` builds one, minus the media:
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

Measured per query, each variant in its own pass after the same warm-up queries:

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
import cProfile
import hashlib
import importlib.metadata
import io
import json
import math
import os
import platform
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.embedding import EmbeddingStartEvent
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, QueryBundle
from PIL import Image

from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import Frame
from llama_index_video.reader import moments
from llama_index_video.reader.units import build_units

# The reader's limit on the speech a frame's text quotes (private; used as is).
from llama_index_video.reader.video_reader import _SPOKEN_CHARS_PER_FRAME
from llama_index_video.search.fusion import FusionRetriever
from llama_index_video.search.policy import CANDIDATES_PER_HIT, MIN_CANDIDATES
from llama_index_video.search.searcher import hit_from_node
from llama_index_video.store.manifest import PathRecord
from llama_index_video.transcription.base import Segment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.latency_support import (  # noqa: E402
    LatencySummary,
    SpeechGenerator,
    group_sentences,
    summarise,
)

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode

    from llama_index_video.results import SearchHit

CACHE = ROOT / "benchmarks" / ".cache" / "search_latency"
BUILD_VERSION = 3  # bump when the synthetic index changes shape
TARGET_P50_MS = 50.0
ISSUE_13_BASELINE_MS = 41.6  # (b) on 0.1.0, as issue 13 reports it
ISSUE_13_TARGET_MS = ISSUE_13_BASELINE_MS / 2
INSERT_BATCH = 512
FIDELITY_SAMPLES = 2  # per recording and modality


# ------------------------------------------------------------------------------ building


@dataclass(frozen=True)
class BuildInfo:
    """What was built; written to ``build.json`` once the folder is complete."""

    hours: float
    recordings: int
    transcript_nodes: int
    frame_nodes: int
    sentences: int
    vectors: str  # "pooled" or "exact"
    distinct_sentences_embedded: int
    frame_interval: float
    embed_seconds: float  # pooled: the sentence pool; exact: included in insert_seconds
    insert_seconds: float
    build_seconds: float
    # per modality: mean and minimum cosine(pooled vector, model vector) over a sample
    fidelity: dict[str, dict[str, float]]
    peak_rss_mb: float
    built_at: str


@dataclass(frozen=True)
class Recording:
    """One synthetic recording's nodes, with the sentences each node is made of."""

    path: Path
    content_hash: str
    duration: float
    sentence_count: int
    nodes: list[BaseNode]
    sentences_of: list[list[str]]


def folder_for(hours: float, *, exact: bool, frame_interval: float, seed: int) -> Path:
    vectors = "exact" if exact else "pooled"
    name = f"v{BUILD_VERSION}-{hours:g}h-{vectors}-frames{frame_interval:g}s-seed{seed}"
    return CACHE / name


def make_recording(
    generator: SpeechGenerator,
    index: int,
    duration: float,
    *,
    folder: Path,
    frame_image: Path,
    frame_interval: float,
) -> Recording:
    """The nodes of one recording, made by the reader's own functions."""
    name = f"lecture_{index:03d}.mp4"
    path = folder / "recordings" / name
    path.touch()
    source = moments.SourceFile(path, hashlib.sha256(name.encode()).hexdigest())
    sentences = list(generator.recording(index, duration))
    units = list(build_units(Segment(s.start, s.end, s.text) for s in sentences))
    groups = group_sentences([u.text for u in units], [s.text for s in sentences])
    unit_sentences = [[sentences[i].text for i in group] for group in groups]
    spoken_nodes = moments.transcript_nodes(source, units, language="en", note=None)
    frame_nodes: list[BaseNode] = []
    sentences_of = list(unit_sentences)
    for step in range(math.ceil(duration / frame_interval)):
        start = step * frame_interval
        end = min(start + frame_interval, duration)
        frame = Frame(start, end, frame_image, 320, 180, "interval")
        spoken = moments.spoken_between(units, start, end, _SPOKEN_CHARS_PER_FRAME)
        frame_nodes.append(moments.frame_node(source, frame, spoken=spoken, note=None))
        sentences_of.append(
            [
                text
                for unit, texts in zip(units, unit_sentences, strict=True)
                if unit.start < end and unit.end > start
                for text in texts
            ]
        )
    moments.link_moments(spoken_nodes, frame_nodes)  # as VideoReader does
    nodes = [*spoken_nodes, *frame_nodes]
    return Recording(path, source.content_hash, duration, len(sentences), nodes, sentences_of)


class PooledVectors:
    """Node vectors as normalised sums of model vectors of their sentences."""

    def __init__(self, model: BaseEmbedding, sentences: Sequence[str]) -> None:
        self._model = model
        started = time.perf_counter()
        self._rows = np.asarray(model.get_text_embedding_batch(list(sentences), show_progress=True))
        self.seconds = time.perf_counter() - started
        self._row_of = {text: i for i, text in enumerate(sentences)}
        self.count = len(sentences)

    def assign(self, recording: Recording) -> None:
        unplaced = []
        for node, texts in zip(recording.nodes, recording.sentences_of, strict=True):
            if not texts:  # a frame with nothing said: embed its own text
                unplaced.append(node)
                continue
            vector = self._rows[[self._row_of[t] for t in texts]].sum(axis=0)
            node.embedding = (vector / np.linalg.norm(vector)).tolist()
        if unplaced:
            texts = [n.get_content(metadata_mode=MetadataMode.EMBED) for n in unplaced]
            vectors = self._model.get_text_embedding_batch(texts)
            for node, vector in zip(unplaced, vectors, strict=True):
                node.embedding = vector


def pooling_fidelity(
    model: BaseEmbedding, samples: Sequence[tuple[str, str, list[float]]]
) -> dict[str, dict[str, float]]:
    """Per modality, mean and minimum cosine between pooled and model vectors.

    Args:
        model: The embedding model.
        samples: ``(modality, embedded text, pooled vector)`` of some nodes.
    """
    fidelity: dict[str, dict[str, float]] = {}
    for modality in sorted({m for m, _, _ in samples}):
        chosen = [(text, vector) for m, text, vector in samples if m == modality]
        exact = np.asarray(model.get_text_embedding_batch([t for t, _ in chosen]))
        pooled = np.asarray([v for _, v in chosen])
        found = (exact * pooled).sum(axis=1) / (
            np.linalg.norm(exact, axis=1) * np.linalg.norm(pooled, axis=1)
        )
        fidelity[modality] = {"mean": float(found.mean()), "min": float(found.min())}
    return fidelity


def add_recording(video_index: VideoIndex, recording: Recording) -> None:
    """Insert the nodes and record the file in the manifest, as ``Ingestor`` does."""
    manifest = video_index.manifest
    manifest.set_file(recording.content_hash, "indexing")
    for start in range(0, len(recording.nodes), INSERT_BATCH):
        video_index.index.insert_nodes(recording.nodes[start : start + INSERT_BATCH])
    stat = recording.path.stat()
    record = PathRecord(
        str(recording.path.resolve()),
        str(recording.path),
        recording.content_hash,
        stat.st_size,
        stat.st_mtime_ns,
    )
    with manifest.transaction():
        manifest.set_file(
            recording.content_hash,
            "indexed",
            node_count=len(recording.nodes),
            duration=recording.duration,
        )
        manifest.set_path(record)


def build(
    folder: Path, *, hours: float, exact: bool, frame_interval: float, seed: int
) -> BuildInfo:
    """Build the synthetic index folder (see the module docstring) and describe it."""
    started = time.perf_counter()
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "recordings").mkdir(parents=True)
    (folder / "media").mkdir()
    frame_image = folder / "media" / "frame.jpg"
    Image.new("RGB", (320, 180), (40, 70, 110)).save(frame_image, quality=85)

    count = max(1, math.ceil(hours))
    duration = hours * 3600.0 / count
    generator = SpeechGenerator(seed=seed)
    video_index = VideoIndex(folder)
    model = video_index.embed_model
    pool = None
    if not exact:
        sentences = sorted({s for texts in generator.pool().values() for s in texts})
        print(f"embedding {len(sentences)} distinct sentences ...", flush=True)
        pool = PooledVectors(model, sentences)
    video_index._record_identity()  # what VideoIndex.ingest does first

    totals = {"transcript": 0, "frame": 0, "sentences": 0}
    samples: list[tuple[str, str, list[float]]] = []  # (modality, text, pooled vector)
    insert_started = time.perf_counter()
    for index in range(count):
        recording = make_recording(
            generator,
            index,
            duration,
            folder=folder,
            frame_image=frame_image,
            frame_interval=frame_interval,
        )
        if pool is not None:
            pool.assign(recording)
            for modality in ("transcript", "frame"):
                of_modality = [n for n in recording.nodes if n.metadata["modality"] == modality]
                step = max(1, len(of_modality) // FIDELITY_SAMPLES)
                samples.extend(
                    (modality, n.get_content(MetadataMode.EMBED), list(n.embedding or ()))
                    for n in of_modality[step // 2 :: step][:FIDELITY_SAMPLES]
                )
        add_recording(video_index, recording)
        frames = sum(1 for n in recording.nodes if n.metadata.get("modality") == "frame")
        totals["frame"] += frames
        totals["transcript"] += len(recording.nodes) - frames
        totals["sentences"] += recording.sentence_count
        elapsed = time.perf_counter() - insert_started
        print(f"  recording {index + 1}/{count} indexed ({elapsed:.0f} s)", flush=True)
    insert_seconds = time.perf_counter() - insert_started

    fidelity = pooling_fidelity(model, samples)
    video_index.close()
    info = BuildInfo(
        hours=hours,
        recordings=count,
        transcript_nodes=totals["transcript"],
        frame_nodes=totals["frame"],
        sentences=totals["sentences"],
        vectors="exact" if exact else "pooled",
        distinct_sentences_embedded=pool.count if pool else 0,
        frame_interval=frame_interval,
        embed_seconds=pool.seconds if pool else 0.0,
        insert_seconds=insert_seconds,
        build_seconds=time.perf_counter() - started,
        fidelity=fidelity,
        peak_rss_mb=peak_rss_mb(),
        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    (folder / "build.json").write_text(json.dumps(asdict(info), indent=2))
    return info


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


def build_flags(args: argparse.Namespace) -> list[str]:
    flags = ["--hours", str(args.hours), "--frame-interval", str(args.frame_interval)]
    flags += ["--seed", str(args.seed)]
    return [*flags, "--exact-embeddings"] if args.exact_embeddings else flags


# ----------------------------------------------------------------------------- measuring


class EmbeddingCalls:
    """Counts the calls of embedding models of one class, by LlamaIndex instrumentation."""

    def __init__(self, model_class: str) -> None:
        counter = self

        class _Handler(BaseEventHandler):
            @classmethod
            def class_name(cls) -> str:
                return "EmbeddingCallCounter"

            def handle(self, event: Any, **kwargs: Any) -> None:
                if (
                    isinstance(event, EmbeddingStartEvent)
                    and event.model_dict.get("class_name") == model_class
                ):
                    counter.count += 1

        self.count = 0
        get_dispatcher().add_event_handler(_Handler())


class PrecomputedEmbedding(BaseEmbedding):
    """Answers queries with vectors computed beforehand; embeds nothing itself."""

    vectors: dict[str, list[float]] = Field(default_factory=dict)

    @classmethod
    def class_name(cls) -> str:
        return "PrecomputedEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.vectors[query]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self.vectors[query]

    def _get_text_embedding(self, text: str) -> list[float]:
        raise NotImplementedError("PrecomputedEmbedding answers queries only")


@dataclass
class Variant:
    """One measured variant: per-query latencies, optionally per stage."""

    name: str
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)  # this process, all threads
    stages: dict[str, list[float]] = field(default_factory=dict)
    embedding_calls: int = 0
    split_by_hits: bool = False  # also report queries with and without hits apart


def search_precomputed(
    video_index: VideoIndex, query: str, embedding: PrecomputedEmbedding, *, top_k: int
) -> tuple[list[SearchHit], dict[str, float]]:
    """``VideoIndex.search`` step by step, the query vector looked up; with stage timings.

    The fused retriever is ``as_retriever``'s own, its channels handed ``embedding``
    in place of the index's model: it is where ``FusionRetriever`` takes the query
    vector from, whatever the ``QueryBundle`` carries.
    """
    stages: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stages[stage] = now - clock
        clock = now

    fused = video_index.as_retriever(top_k=top_k)
    retriever = FusionRetriever(
        [
            replace(c, embed_model=embedding) if c.embed_model is video_index.embed_model else c
            for c in fused.channels
        ],
        top_k=fused.top_k,
        k=fused.k,
    )
    postprocessor = video_index.postprocessor()
    lap("set-up (as_retriever, postprocessor)")
    hits = retriever.retrieve(query)
    lap("retrieve and fuse, all channels")
    hits = postprocessor.postprocess_nodes(hits, query_str=query)
    lap("postprocess (TimestampFramePostprocessor)")
    found = [hit_from_node(hit, locate=video_index.locate) for hit in hits]
    lap("hit_from_node (with locate)")
    return found, stages


def run_pass(
    variant: Variant,
    call: Callable[[int], dict[str, float] | None],
    measured: Sequence[int],
    warmup: Sequence[int],
    calls: EmbeddingCalls,
) -> None:
    """Warm up, then time ``call(i)`` for every measured query index."""
    for i in warmup:
        call(i)
    before = calls.count
    for i in measured:
        started, cpu_started = time.perf_counter(), time.process_time()
        stages = call(i)
        variant.seconds.append(time.perf_counter() - started)
        variant.cpu_seconds.append(time.process_time() - cpu_started)
        for stage, seconds in (stages or {}).items():
            variant.stages.setdefault(stage, []).append(seconds)
    variant.embedding_calls = calls.count - before


@dataclass(frozen=True)
class Measurement:
    """Every variant's latencies and what the searches found."""

    variants: list[Variant]
    queries: int
    answered_flags: list[bool]  # per measured query: whether (a) found anything
    warmup: int
    answered: int
    mean_hits: float
    mismatches: int
    gate_passed: int | None  # measured queries (f), the standout gate on, returned hits for
    fusion_embeds_given_vector: int
    open_seconds: float
    threshold: float | None
    channels: list[str]
    found: list[list[tuple[str, str, float | None]]]  # per measured query: the hits of (b)


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


def profile_precomputed(
    video_index: VideoIndex, texts: Sequence[str], embedding: PrecomputedEmbedding, *, top_k: int
) -> str:
    """cProfile of variant (a) over ``texts``: the top functions by cumulative and own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for text in texts:
        search_precomputed(video_index, text, embedding, top_k=top_k)
    profiler.disable()
    CACHE.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(CACHE / "search_precomputed.pstats")
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)
    return out.getvalue()


# ------------------------------------------------------------------------------ reporting


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


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
