"""Weighted reciprocal rank fusion: the fuser itself, then per-modality retrieval in an index."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.embedding import EmbeddingStartEvent
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.ocr import ScreenTextSpan
from llama_index_video.reader import moments
from llama_index_video.reader.ids import content_hash
from llama_index_video.reader.units import TranscriptUnit
from llama_index_video.store.fusion import (
    RRF_K,
    Channel,
    FusionRetriever,
    fuse,
    similarities,
)
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
    assert [c.name for c in retriever.channels] == list(schema.MODALITIES)
    with embedding_calls() as counter:
        found = retriever.retrieve(DOBSON)
    assert counter.count == 1
    assert found[0].node.metadata[schema.MODALITY] == "ocr"
    assert "DOBSON" in found[0].node.get_content()


def test_a_standout_gate_reuses_the_query_embedding_of_the_search(memory_index, monkeypatch):
    from llama_index.core.schema import QueryBundle

    from llama_index_video.index import STANDOUT_GATES

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
