"""How benchmarks/search_latency.py times a search: variant (a), the steps of
``VideoIndex.search`` with the query vector looked up, stage by stage; a pass of warm-up
and measured queries; a count of the real model's calls; and what a run measured."""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.embedding import EmbeddingStartEvent

from benchmarks.synthetic_index import CACHE
from llama_index_video.search.fusion import FusionRetriever
from llama_index_video.search.searcher import hit_from_node

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.results import SearchHit


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
