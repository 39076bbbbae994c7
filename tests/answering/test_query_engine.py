"""The LlamaIndex way to answer over an index: ``as_query_engine()``, a user's own
``RetrieverQueryEngine`` over ``as_retriever()``, ``Settings.llm``, async and streaming.

Claude is the package's adapter talking to the fake Messages API; the index is the
example index (its transcripts the narration script), so the moment a question finds
is known.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.query_engine import RetrieverQueryEngine

from llama_index_video.answering.citations import UNVERIFIED_MARK
from llama_index_video.answering.claude import ClaudeMultimodalLLM
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply

QUESTION = "What does the latency slide show?"
INVENTED = "[nowhere.mp4 00:01-00:02]"


@pytest.fixture
def claude(make_claude) -> ClaudeMultimodalLLM:
    return make_claude()


@pytest.fixture
def best(example_index) -> Any:
    """The moment the question finds, which a faithful answer cites."""
    return example_index.search(QUESTION)[0]


@pytest.fixture
def settings_llm() -> Iterator[None]:
    """``Settings.llm`` as the app left it, restored after the test."""
    before = Settings._llm
    yield
    Settings._llm = before


def parts(server: FakeAnthropicServer, kind: str) -> list[dict]:
    (turn,) = server.messages_requests()[-1].body["messages"]
    return [part for part in turn["content"] if part["type"] == kind]


def reply_citing(best: Any) -> Any:
    return text_reply("The p99 latency ", f"is 340 ms {best.label} {INVENTED}.")


def test_the_query_engine_sends_frames_and_returns_checked_citations(
    example_index, claude, fake_anthropic, best
):
    fake_anthropic.enqueue(reply_citing(best))

    response = example_index.as_query_engine(llm=claude).query(QUESTION)

    assert isinstance(response, Response)
    assert best.label in str(response)
    assert f"{INVENTED[1:-1]}{UNVERIFIED_MARK}" in str(response)  # flagged, not a citation
    assert [c["label"] for c in response.metadata["citations"]] == [best.label]
    assert response.metadata["unverified"] == [INVENTED]
    assert response.metadata["answer"].text == str(response)
    assert parts(fake_anthropic, "image")  # the moments' frames, as images
    texts = " ".join(part["text"] for part in parts(fake_anthropic, "text"))
    assert best.label in texts
    assert response.source_nodes[0].node.metadata["source"].endswith(best.source.split("/")[-1])
    assert any(getattr(n.node, "image_path", None) for n in response.source_nodes)


@pytest.mark.parametrize("streaming", [False, True])
def test_query_and_aquery_agree_streamed_or_not(
    example_index, claude, fake_anthropic, best, streaming
):
    engine = example_index.as_query_engine(llm=claude, streaming=streaming)
    fake_anthropic.enqueue(reply_citing(best), reply_citing(best))

    sync = engine.query(QUESTION)
    sync_text = "" if streaming else str(sync)
    if streaming:
        assert isinstance(sync, StreamingResponse)
        assert sync.metadata == {}  # filled once the text is read
        deltas = list(sync.response_gen)
        assert deltas == ["The p99 latency ", f"is 340 ms {best.label} {INVENTED}."]
        sync_text = "".join(deltas)  # as the model wrote it; the checked text is in "answer"

    async def run() -> tuple[Any, str]:
        response = await engine.aquery(QUESTION)
        if streaming:
            assert isinstance(response, AsyncStreamingResponse)
            return response, "".join([d async for d in response.response_gen])
        return response, str(response)

    async_response, async_text = asyncio.run(run())
    sync_request, async_request = fake_anthropic.messages_requests()
    assert sync_request.body == async_request.body
    assert sync_request.body.get("stream", False) is streaming
    for response in (sync, async_response):
        assert [c["label"] for c in response.metadata["citations"]] == [best.label]
        assert response.metadata["unverified"] == [INVENTED]
    assert async_response.metadata["answer"] == sync.metadata["answer"]
    assert async_text == sync_text


def test_ask_and_aask_give_the_same_answer(example_index, claude, fake_anthropic, best):
    fake_anthropic.enqueue(reply_citing(best), reply_citing(best))
    sync = example_index.ask(QUESTION, llm=claude)
    asynchronous = asyncio.run(example_index.aask(QUESTION, llm=claude))
    assert asynchronous == sync
    assert [c.label for c in sync.citations] == [best.label]
    first, second = fake_anthropic.messages_requests()
    assert first.body == second.body


def test_search_and_asearch_give_the_same_hits(example_index):
    sync = example_index.search(QUESTION, top_k=3)
    asynchronous = asyncio.run(example_index.asearch(QUESTION, top_k=3))
    assert asynchronous == sync and sync


def test_the_retriever_takes_llama_indexs_similarity_top_k(example_index):
    # VectorStoreIndex.as_retriever's name for it; a TypeError before
    one = example_index.as_retriever(similarity_top_k=1).retrieve(QUESTION)
    three = example_index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
    assert len(one) == 1 and len(three) == 3
    assert one[0].node.node_id == three[0].node.node_id


def test_a_retriever_query_engine_over_the_retriever_sends_frames_as_images(
    example_index, claude, fake_anthropic, best
):
    engine = RetrieverQueryEngine.from_args(
        example_index.as_retriever(), llm=claude, multimodal=True
    )
    fake_anthropic.enqueue(text_reply("340 ms."))

    response = engine.query(QUESTION)

    assert str(response) == "340 ms."
    assert parts(fake_anthropic, "image")
    texts = " ".join(part["text"] for part in parts(fake_anthropic, "text"))
    assert f"label: {best.label}" in texts  # each moment under the label to cite
    frames = [n.node for n in response.source_nodes if n.node.metadata["modality"] == "frame"]
    assert frames and all(node.image_path.endswith(".jpg") for node in frames)


def test_settings_llm_answers_where_no_llm_is_given(
    example_index, claude, fake_anthropic, best, settings_llm
):
    fake_anthropic.enqueue(reply_citing(best), reply_citing(best))
    extractive = example_index.ask(QUESTION)
    assert extractive.model is None and fake_anthropic.requests == []

    Settings.llm = claude
    answer = example_index.ask(QUESTION)
    response = example_index.as_query_engine().query(QUESTION)

    assert answer.model == claude.model
    assert response.metadata["answer"] == answer
    assert len(fake_anthropic.messages_requests()) == 2
