"""Weighted reciprocal rank fusion: the fuser itself, then per-modality retrieval in an index."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.embedding import EmbeddingStartEvent
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.ocr import ScreenTextSpan
from llama_index_video.reader import moments
from llama_index_video.reader.ids import content_hash
from llama_index_video.reader.units import TranscriptUnit
from llama_index_video.search.fusion import (
    RRF_K,
    Channel,
    FusionRetriever,
    fuse,
    similarities,
)
from llama_index_video.search.retriever import VideoRetriever
from tests_support import OZONE

DOBSON = "How thick is one Dobson unit?"


def hits(*scored: tuple[str, float]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(id_=i, text=i), score=s) for i, s in scored]


def ids(fused: list[NodeWithScore]) -> list[str]:
    return [h.node.node_id for h in fused]


def test_a_node_found_by_two_channels_outranks_one_found_by_one():
    fused = fuse(
        [
            (1.0, hits(("a", 0.9), ("both", 0.8))),
            (1.0, hits(("b", 0.6), ("both", 0.5))),
        ],
        top_k=5,
    )
    assert ids(fused)[0] == "both"
    assert fused[0].score == pytest.approx(2 / (RRF_K + 2))


def test_weights_scale_a_channels_ranks_and_zero_mutes_it():
    ranked = [
        (2.0, hits(("t1", 0.9), ("t2", 0.8))),
        (1.0, hits(("o1", 0.95))),
        (0.0, hits(("f1", 0.99))),
    ]
    fused = fuse(ranked, top_k=5)
    assert ids(fused) == ["t1", "t2", "o1"]
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)


def test_equal_fused_scores_go_to_the_higher_similarity_and_top_k_cuts():
    ranked = [(1.0, hits(("t", 0.4))), (1.0, hits(("o", 0.7)))]
    assert ids(fuse(ranked, top_k=5)) == ["o", "t"]
    assert ids(fuse(ranked, top_k=1)) == ["o"]


def test_the_similarity_is_kept_beside_the_untouched_node():
    original = hits(("a", 0.8123456), ("b", 0.5))
    fused = fuse([(1.0, original), (3.0, hits(("b", 0.2)))], top_k=2)
    assert ids(fused) == ["b", "a"]
    assert [h.similarity for h in fused] == [0.2, 0.8123456]  # from the strongest channel
    assert fused[1].node is original[0].node
    assert similarities([*fused, *original]) == {"b": 0.2, "a": 0.8123456}


class _Listed(BaseRetriever):
    """Returns fixed hits, best first; with ``batch``, also hands them over in batches."""

    def __init__(self, found: list[NodeWithScore], batch: int | None = None) -> None:
        super().__init__()
        self.found = found
        self.batch = batch
        self.batches_read = 0

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [h.model_copy() for h in self.found]

    def ranked_batches(self, query_bundle: QueryBundle, *, first: int) -> Iterator[list]:
        assert self.batch is not None
        for start in range(0, len(self.found), self.batch):
            self.batches_read += 1
            yield [h.model_copy() for h in self.found[start : start + self.batch]]


class _Plain(BaseRetriever):
    """Only retrieves (no ``ranked_batches``): fusion reads all of its hits."""

    def __init__(self, inner: BaseRetriever) -> None:
        super().__init__()
        self._inner = inner

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._inner.retrieve(query_bundle)


def _modal_hits(rng: random.Random, count: int, prefix: str = "n") -> list[NodeWithScore]:
    found = [
        NodeWithScore(
            node=TextNode(
                id_=f"{prefix}{i}",
                text="",
                metadata={schema.MODALITY: rng.choice(schema.MODALITIES)},
            ),
            score=round(rng.uniform(-0.2, 0.9), 2),  # coarse, so equal scores occur
        )
        for i in range(count)
    ]
    return sorted(found, key=lambda h: h.score, reverse=True)


def _found(fused: list[NodeWithScore]) -> list[tuple[str, float | None, float | None]]:
    return [(h.node.node_id, h.score, h.similarity) for h in fused]


def test_reading_ranked_batches_gives_what_reading_every_hit_gives():
    rng = random.Random(13)
    early = 0
    for trial in range(300):
        found = [_modal_hits(rng, rng.randint(0, 30), prefix) for prefix in "ab"]
        weights = {m: rng.choice([0.0, 0.05, 0.5, 0.9, 1.0]) for m in schema.MODALITIES}
        top_k = rng.randint(1, 6)
        listed = [_Listed(hits_, batch=rng.randint(1, 4)) for hits_ in found]
        shares = [rng.randrange(2) for _ in schema.MODALITIES]  # which retriever serves each

        def channels(retrievers, shares=shares, weights=weights):
            return [
                Channel(m, retrievers[share], weights[m], modality=m)
                for m, share in zip(schema.MODALITIES, shares, strict=True)
            ]

        batched = FusionRetriever(channels(listed), top_k=top_k).retrieve(QueryBundle("q"))
        every = FusionRetriever(channels([_Plain(r) for r in listed]), top_k=top_k).retrieve(
            QueryBundle("q")
        )
        assert _found(batched) == _found(every), trial
        early += any(r.batches_read < -(-len(r.found) // r.batch) for r in listed)
    assert early > 100  # most trials stopped before the last batch of some retriever


def test_a_retriever_is_read_only_until_the_rest_cannot_reach_the_top():
    rng = random.Random(5)
    found = _modal_hits(rng, 40)
    listed = _Listed([h for h in found if h.node.metadata[schema.MODALITY] == "transcript"], 2)
    fused = FusionRetriever([Channel("transcript", listed, modality="transcript")], top_k=2)
    assert _found(fused.retrieve(QueryBundle("q"))) == _found(
        FusionRetriever(
            [Channel("transcript", _Plain(listed), modality="transcript")], top_k=2
        ).retrieve(QueryBundle("q"))
    )
    assert listed.batches_read == 2  # the best two, then two more to see nothing beats them


def test_channels_are_validated(memory_index):
    retriever = memory_index.as_retriever().channels[0].retriever
    with pytest.raises(ValueError, match="weight"):
        Channel("ocr", retriever, -1)
    with pytest.raises(ValueError, match="unique"):
        FusionRetriever([Channel("ocr", retriever), Channel("ocr", retriever)])


@pytest.fixture(scope="module")
def ozone_nodes(timeline, tmp_path_factory):
    """Narration as transcript nodes and the slides' text as ocr nodes, from the ground truth."""
    source = moments.SourceFile(OZONE, content_hash(OZONE))
    truth = timeline["ozone_explainer.mp4"]
    units = [TranscriptUnit(s["start"], s["end"], s["text"]) for s in truth["narration"]]
    frame = tmp_path_factory.mktemp("frames") / "slide.jpg"
    spans = [
        ScreenTextSpan(s["start"], s["end"], tuple(s["visible_text"]), s["start"], frame)
        for s in truth["slides"]
    ]
    return [
        *moments.transcript_nodes(source, units, language="en", note=None),
        *moments.ocr_nodes(source, spans, max_chars=1000, note=None),
    ]


@pytest.fixture(scope="module")
def memory_index(tmp_path_factory, ozone_nodes, embed_model):
    folder = tmp_path_factory.mktemp("fusion")
    index = VideoIndex(folder, embed_model=embed_model, vector_store=SimpleVectorStore())
    _insert(index, ozone_nodes)
    yield index
    index.close()


def _insert(index, nodes):
    """Store ``nodes`` and mark their file indexed, as ingest does (search shows only that)."""
    index.index.insert_nodes(nodes)
    index.manifest.set_file(
        nodes[0].metadata[schema.CONTENT_HASH], "indexed", node_count=len(nodes)
    )


class _EmbeddingCounter(BaseEventHandler):
    count: int = 0

    @classmethod
    def class_name(cls) -> str:
        return "EmbeddingCounter"

    def handle(self, event: BaseEvent, **kwargs) -> None:
        if isinstance(event, EmbeddingStartEvent):
            self.count += 1


@contextmanager
def embedding_calls() -> Iterator[_EmbeddingCounter]:
    """Counts the embedding calls made inside the block."""
    counter = _EmbeddingCounter()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(counter)
    try:
        yield counter
    finally:
        dispatcher.event_handlers.remove(counter)


def test_each_modality_is_ranked_and_the_query_embedded_once(memory_index):
    retriever = memory_index.as_retriever(top_k=3)
    assert [c.name for c in retriever.channels] == [*schema.MOMENT_MODALITIES, "lexical"]
    with embedding_calls() as counter:
        found = retriever.retrieve(DOBSON)
    assert counter.count == 1
    assert found[0].node.metadata[schema.MODALITY] == "ocr"
    assert "DOBSON" in found[0].node.get_content()


def test_a_standout_gate_reuses_the_query_embedding_of_the_search(memory_index, monkeypatch):
    from llama_index.core.schema import QueryBundle

    from llama_index_video.search.policy import STANDOUT_GATES

    monkeypatch.setattr(memory_index, "relevance", STANDOUT_GATES[memory_index.identity])
    bundle = QueryBundle(DOBSON)
    memory_index.as_retriever().retrieve(bundle)
    assert bundle.embedding is not None  # left by the retrieval, as LlamaIndex's retrievers do
    with embedding_calls() as counter:
        found = memory_index.search(DOBSON)
    assert found and found[0].modality == "ocr"
    assert counter.count == 1  # the gate's query of the recording embeds nothing again


def test_the_similarity_is_the_cosine_the_threshold_applies_to(memory_index, embed_model):
    [hit, *_] = memory_index.search(DOBSON)
    query = np.array(embed_model.get_query_embedding(DOBSON))
    text = np.array(embed_model.get_text_embedding("1 DOBSON UNIT = 0.01 mm"))
    cosine = float(query @ text / np.linalg.norm(query) / np.linalg.norm(text))
    assert hit.modality == "ocr" and hit.score == pytest.approx(cosine, abs=1e-3)
    assert Path(hit.frame_path).name == "slide.jpg" and hit.frame_time == 21.0
    found = memory_index.as_retriever(top_k=5).retrieve(DOBSON)
    assert found and all(h.similarity >= memory_index.threshold for h in found)


def test_modality_filter_and_weights(memory_index, tmp_path, embed_model, ozone_nodes):
    only = memory_index.as_retriever(top_k=5, modalities=["transcript"]).retrieve(DOBSON)
    assert {h.node.metadata[schema.MODALITY] for h in only} <= {"transcript"}
    muted = VideoIndex(
        tmp_path / "muted",
        embed_model=embed_model,
        vector_store=SimpleVectorStore(),
        weights={"ocr": 0},
    )
    _insert(muted, ozone_nodes)
    assert "ocr" not in [c.name for c in muted.as_retriever().channels]
    assert all(h.modality != "ocr" for h in muted.search(DOBSON))
    muted.close()
    with pytest.raises(ValueError, match="unknown weights"):
        VideoIndex(tmp_path / "bad", embed_model=embed_model, weights={"slides": 1.0})


def test_sync_and_async_retrieval_agree(memory_index):
    retriever = memory_index.as_retriever(top_k=5)
    sync = retriever.retrieve(DOBSON)
    async_ = asyncio.run(retriever.aretrieve(DOBSON))
    assert ids(sync) == ids(async_)
    assert [h.score for h in sync] == pytest.approx([h.score for h in async_])


@pytest.fixture(scope="module")
def chroma_index(tmp_path_factory, ozone_nodes, embed_model):
    folder = tmp_path_factory.mktemp("fusion-chroma")
    index = VideoIndex(folder, embed_model=embed_model)
    _insert(index, ozone_nodes)
    yield index
    index.close()


QUERIES = (
    DOBSON,
    "why does the stratosphere get warmer with height",
    "which chemicals destroy ozone",
    "how to bake sourdough bread",
)


@pytest.mark.parametrize(
    "weights", [{}, {"transcript": 0.05}, {"ocr": 0.05, "frame": 0.0}], ids=str
)
def test_chroma_rows_read_in_batches_give_the_hits_of_reading_them_all(
    chroma_index, weights, monkeypatch
):
    monkeypatch.setattr(chroma_index, "weights", {**chroma_index.weights, **weights})
    for top_k in (1, 3, 5):
        fused = chroma_index.as_retriever(top_k=top_k)
        [shared] = {id(c.retriever): c.retriever for c in fused.channels if not c.adds}.values()
        plain = _Plain(shared)
        every = FusionRetriever(
            [replace(c, retriever=plain) if not c.adds else c for c in fused.channels], top_k=top_k
        )
        for query in QUERIES:
            assert _found(fused.retrieve(query)) == _found(every.retrieve(QueryBundle(query))), (
                query,
                top_k,
            )


def test_chroma_batches_are_the_retrieved_hits_and_only_the_best_rows_are_read(
    chroma_index, embed_model, monkeypatch
):
    read: list[int] = []
    get_nodes = ChromaVectorStore.get_nodes

    def counted(store, node_ids=None, filters=None):
        read.append(len(node_ids or ()))
        return get_nodes(store, node_ids, filters)

    monkeypatch.setattr(ChromaVectorStore, "get_nodes", counted)
    retriever = VideoRetriever(
        chroma_index.index,
        top_k=20,
        threshold=0.1,
        visible=chroma_index.manifest.indexed_among,
        folder=chroma_index.path,
    )
    bundle = QueryBundle(DOBSON, embedding=embed_model.get_query_embedding(DOBSON))
    everything = retriever.retrieve(bundle)
    assert 6 < len(everything) < 20  # the threshold dropped some of the 20 candidates
    batches = list(retriever.ranked_batches(bundle, first=2))
    assert [len(b) for b in batches] == [2, 4, len(everything) - 6][: len(batches)]
    assert [(h.node.node_id, h.score) for b in batches for h in b] == [
        (h.node.node_id, h.score) for h in everything
    ]
    assert [h.node for b in batches for h in b] == [h.node for h in everything]
    assert read == [len(b) for b in batches]  # rows below the threshold were never read
    read.clear()
    assert next(retriever.ranked_batches(bundle, first=3))
    assert read == [3]


def test_chroma_batches_of_a_filtered_or_unembedded_query_are_one_retrieval(chroma_index):
    filtered = VideoRetriever(chroma_index.index, top_k=5, modalities=["ocr"])
    bundle = QueryBundle(DOBSON, embedding=chroma_index.embed_model.get_query_embedding(DOBSON))
    [batch] = filtered.ranked_batches(bundle, first=1)
    assert [h.node.node_id for h in batch] == [h.node.node_id for h in filtered.retrieve(bundle)]
    plain = VideoRetriever(chroma_index.index, top_k=5)
    [batch] = plain.ranked_batches(QueryBundle(DOBSON), first=1)
    assert len(batch) == 5
    with pytest.raises(ValueError, match="first"):
        next(plain.ranked_batches(bundle, first=0))


@pytest.mark.parametrize("store", ["memory_index", "chroma_index"])
def test_the_policys_plain_retrievers_take_a_question_as_a_string(store, request):
    index = request.getfixturevalue(store)
    policy = index.search_policy()
    expected = _found(index.as_retriever(top_k=3).retrieve(DOBSON))
    assert expected and _found(policy.retriever(top_k=3).retrieve(DOBSON)) == expected
    by_chapter = policy.retriever(top_k=3, by_chapter=True).retrieve(DOBSON)
    assert [h.node.node_id for h in by_chapter] == [
        h.node.node_id for h in index.as_retriever(top_k=3, by_chapter=True).retrieve(DOBSON)
    ]
