"""ClaudeMultimodalLLM against the fake Anthropic API, through the real SDK client."""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
)
from llama_index.core.bridge.pydantic import ValidationError
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import ImageNode, NodeWithScore, QueryBundle, TextNode
from PIL import Image

from llama_index_video.answering.claude import ClaudeMultimodalLLM, encode_image
from llama_index_video.answering.prompts import (
    SYSTEM_PROMPT,
    VIDEO_QA_TEMPLATE,
    ContextItem,
    build_messages,
)
from llama_index_video.api_keys import scrubbed_traceback
from llama_index_video.errors import AnswerError, RemoteAPIError
from tests.answering.llm_checks import agreement_conversation, exposures
from tests.fakes.anthropic_server import error_reply, slow_reply, text_reply, tool_reply


def user(*blocks: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=list(blocks))


def content_of(request: Any) -> list[dict[str, Any]]:
    (turn,) = request.body["messages"]
    assert turn["role"] == "user"
    return turn["content"]


def image_parts(request: Any) -> list[dict[str, Any]]:
    return [part for part in content_of(request) if part["type"] == "image"]


def decoded(part: dict[str, Any]) -> Image.Image:
    assert part["source"]["type"] == "base64"
    assert part["source"]["media_type"] == "image/jpeg"
    image = Image.open(io.BytesIO(base64.b64decode(part["source"]["data"])))
    assert image.format == "JPEG"
    return image


def video_items(transcript: TextNode, frame: Path) -> list[ContextItem]:
    shot = ImageNode(
        text="On screen: Loss curve",
        image_path=str(frame),
        metadata={"source": "/media/talk.mp4", "modality": "frame", "start_s": 96.0},
    )
    return [ContextItem.from_node(transcript), ContextItem.from_node(shot)]


# -- what the request carries ---------------------------------------------------------


def test_request_carries_labelled_transcript_and_bounded_frame(
    make_claude, fake_anthropic, big_frame, talk_transcript
):
    llm = make_claude(max_tokens=300)
    answer = llm.chat(build_messages("Which loss?", video_items(talk_transcript, big_frame)))

    assert answer.message.content == "The answer."
    (request,) = fake_anthropic.messages_requests()
    assert request.body["model"] == "claude-sonnet-4-6"
    assert request.body["max_tokens"] == 300
    assert request.body["system"] == SYSTEM_PROMPT
    assert request.headers["anthropic-version"]
    texts = [part["text"] for part in content_of(request) if part["type"] == "text"]
    assert "[talk.mp4 01:34-01:41] transcript:\nWe train with cross-entropy." in texts
    assert "[talk.mp4 01:36] video frame:\nOn screen: Loss curve" in texts
    assert texts[-1] == "Question: Which loss?"
    kinds = [part["type"] for part in content_of(request)]
    assert kinds[kinds.index("image") - 1] == "text"  # the frame follows its label
    (image,) = [decoded(part) for part in image_parts(request)]
    assert image.size == (1568, 784)  # long edge bounded, aspect ratio kept


@pytest.mark.parametrize("source", ["path", "raw bytes", "base64 bytes", "data url"])
def test_every_local_image_form_becomes_a_bounded_jpeg(source, big_frame):
    raw = big_frame.read_bytes()
    block = {
        "path": lambda: ImageBlock(path=big_frame),
        "raw bytes": lambda: ImageBlock(image=raw),
        "base64 bytes": lambda: ImageBlock(image=base64.b64encode(raw)),
        "data url": lambda: ImageBlock(
            url="data:image/jpeg;base64," + base64.b64encode(raw).decode()
        ),
    }[source]()
    part = {"type": "image", "source": encode_image(block)}
    assert decoded(part).size == (1568, 784)


def test_png_with_alpha_is_converted_and_small_images_are_not_enlarged(tmp_path):
    path = tmp_path / "slide.png"
    Image.new("RGBA", (400, 300), (255, 0, 0, 128)).save(path)
    image = decoded({"source": encode_image(ImageBlock(path=path))})
    assert (image.mode, image.size) == ("RGB", (400, 300))


def test_remote_image_urls_are_passed_on_for_anthropic_to_fetch():
    block = ImageBlock(url="https://example.org/frame.jpg")
    assert encode_image(block) == {"type": "url", "url": "https://example.org/frame.jpg"}


def test_image_count_is_bounded_and_extras_dropped_with_a_warning(
    make_claude, fake_anthropic, frames, caplog
):
    llm = make_claude(max_images=3)
    blocks = [
        b
        for i, f in enumerate(frames)
        for b in (TextBlock(text=f"[v.mp4 00:{i:02d}]"), ImageBlock(path=f))
    ]
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        llm.chat([user(*blocks)])

    (request,) = fake_anthropic.messages_requests()
    kept = [decoded(part).getpixel((0, 0))[0] for part in image_parts(request)]
    assert len(kept) == 3
    assert kept == sorted(kept)  # the first frames are kept
    assert sum(part["type"] == "text" for part in content_of(request)) == 12
    assert "first 3 of 12 images" in caplog.text


def test_unreadable_images_and_unsupported_blocks_are_left_out_with_a_warning(
    make_claude, fake_anthropic, tmp_path, caplog
):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg at all")
    message = user(
        TextBlock(text="Look:"),
        ImageBlock(path=broken),
        AudioBlock(audio=b"RIFF0000WAVEfmt ", format="wav"),
    )
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        make_claude().chat([message])

    (request,) = fake_anthropic.messages_requests()
    assert content_of(request) == [{"type": "text", "text": "Look:"}]
    assert "broken.jpg" in caplog.text
    assert "1 audio block(s)" in caplog.text


def test_system_messages_join_and_consecutive_turns_merge(make_claude, fake_anthropic):
    llm = make_claude(system_prompt="Be brief.")
    llm.chat(
        [
            ChatMessage(role=MessageRole.SYSTEM, content="Cite labels."),
            ChatMessage(role=MessageRole.USER, content="First part."),
            ChatMessage(role=MessageRole.USER, content="Second part."),
            ChatMessage(role=MessageRole.ASSISTANT, content="Noted."),
            ChatMessage(role=MessageRole.USER, content="  "),
            ChatMessage(role=MessageRole.USER, content="Go."),
        ]
    )
    # chat() itself does not add system_prompt (LlamaIndex adds it in predict()).
    (request,) = fake_anthropic.messages_requests()
    assert request.body["system"] == "Cite labels."
    assert [(t["role"], [p["text"] for p in t["content"]]) for t in request.body["messages"]] == [
        ("user", ["First part.", "Second part."]),
        ("assistant", ["Noted."]),
        ("user", ["Go."]),
    ]


def test_options_and_call_parameters_reach_the_request(make_claude, fake_anthropic):
    llm = make_claude(model="claude-haiku-4-5")
    llm.chat([user(TextBlock(text="hi"))], stop_sequences=["END"])
    (request,) = fake_anthropic.messages_requests()
    assert request.body["model"] == "claude-haiku-4-5"
    assert request.body["stop_sequences"] == ["END"]


@pytest.mark.parametrize(
    "messages",
    [[], [ChatMessage(role=MessageRole.SYSTEM, content="only a system prompt")]],
)
def test_nothing_to_send_is_an_answer_error(make_claude, fake_anthropic, messages):
    with pytest.raises(AnswerError, match="no text or image"):
        make_claude().chat(messages)
    assert fake_anthropic.requests == []


def test_a_tool_message_must_name_the_call_it_answers(make_claude, fake_anthropic):
    with pytest.raises(AnswerError, match="tool_call_id"):
        make_claude().chat([ChatMessage(role=MessageRole.TOOL, content="42")])
    assert fake_anthropic.requests == []


# -- tools -----------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def test_tools_are_offered_and_called_then_results_go_back(make_claude, fake_anthropic, frames):
    from llama_index.core.tools import FunctionTool

    llm = make_claude()
    tool = FunctionTool.from_defaults(add)
    fake_anthropic.enqueue(tool_reply("add", text="Let me add.", a=2, b=3), text_reply("5."))

    first = llm.chat_with_tools([tool], user_msg="2+3?", tool_required=True)
    (call,) = llm.get_tool_calls_from_response(first)
    assert (call.tool_name, call.tool_kwargs) == ("add", {"a": 2, "b": 3})
    assert first.message.content == "Let me add."
    result = ChatMessage(
        role=MessageRole.TOOL,
        blocks=[TextBlock(text="5"), ImageBlock(path=frames[0])],
        additional_kwargs={"tool_call_id": call.tool_id},
    )
    history = [ChatMessage(role=MessageRole.USER, content="2+3?"), first.message, result]
    second = llm.chat_with_tools([tool], chat_history=history)
    assert llm.get_tool_calls_from_response(second, error_on_no_tool_call=False) == []
    with pytest.raises(AnswerError, match="without calling a tool"):
        llm.get_tool_calls_from_response(second)

    offer, answer = fake_anthropic.messages_requests()
    (spec,) = offer.body["tools"]
    assert spec["name"] == "add" and "Add two whole numbers" in spec["description"]
    assert set(spec["input_schema"]["properties"]) == {"a", "b"}
    assert offer.body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    _, assistant, back = answer.body["messages"]
    assert assistant["content"][-1] == {
        "type": "tool_use",
        "id": call.tool_id,
        "name": "add",
        "input": {"a": 2, "b": 3},
    }
    (returned,) = back["content"]
    assert returned["type"] == "tool_result" and returned["tool_use_id"] == call.tool_id
    assert [part["type"] for part in returned["content"]] == ["text", "image"]


def test_a_named_tool_choice_and_parallel_calls_reach_the_request(make_claude, fake_anthropic):
    from llama_index.core.tools import FunctionTool

    fake_anthropic.enqueue(tool_reply("add", a=1, b=1))
    make_claude().chat_with_tools(
        [FunctionTool.from_defaults(add)],
        user_msg="1+1?",
        tool_choice="add",
        allow_parallel_tool_calls=True,
    )
    (request,) = fake_anthropic.messages_requests()
    assert request.body["tool_choice"] == {"type": "tool", "name": "add"}


def test_streamed_tool_calls_equal_the_sync_ones(make_claude, fake_anthropic):
    from llama_index.core.tools import FunctionTool

    llm = make_claude()
    tool = FunctionTool.from_defaults(add)
    fake_anthropic.enqueue(*[tool_reply("add", text="Adding.", a=4, b=5)] * 2)

    sync = llm.chat_with_tools([tool], user_msg="4+5?")

    async def streamed() -> Any:
        chunks = [c async for c in await llm.astream_chat_with_tools([tool], user_msg="4+5?")]
        return chunks[-1]

    last = asyncio.run(streamed())
    assert llm.get_tool_calls_from_response(last) == llm.get_tool_calls_from_response(sync)
    assert last.message.content == sync.message.content == "Adding."


@pytest.mark.parametrize(
    "option", [{"max_images": -1}, {"max_image_edge": 2000}, {"timeout": 0}, {"max_tokens": 0}]
)
def test_invalid_options_are_rejected_on_construction(option):
    with pytest.raises(ValidationError):
        ClaudeMultimodalLLM(api_key="k", **option)


# -- retries and failures ----------------------------------------------------------------


def test_rate_limit_is_retried_then_answers(make_claude, fake_anthropic):
    fake_anthropic.enqueue(error_reply(429, retry_after=0.05), text_reply("Recovered."))
    answer = make_claude().chat([user(TextBlock(text="hi"))])

    assert answer.message.content == "Recovered."
    attempts = fake_anthropic.messages_requests()
    assert [r.headers["x-stainless-retry-count"] for r in attempts] == ["0", "1"]


def test_persistent_server_error_is_reported_after_bounded_attempts(make_claude, fake_anthropic):
    fake_anthropic.default = error_reply(500, message="boom\ninternal")
    with pytest.raises(RemoteAPIError) as caught:
        make_claude(max_retries=2).chat([user(TextBlock(text="hi"))])

    assert len(fake_anthropic.messages_requests()) == 3
    error = caught.value
    assert (error.service, error.status) == ("Anthropic", 500)
    assert "\n" not in str(error)
    assert "3 attempt(s)" in str(error)
    assert "api_error: boom internal" in str(error)
    assert "try again later" in str(error)


def test_overloaded_without_retries_is_one_attempt(make_claude, fake_anthropic):
    fake_anthropic.default = error_reply(529)
    with pytest.raises(RemoteAPIError, match="overloaded_error") as caught:
        make_claude(max_retries=0).chat([user(TextBlock(text="hi"))])
    assert caught.value.status == 529
    assert len(fake_anthropic.messages_requests()) == 1


def test_timeouts_are_retried_boundedly_then_reported(make_claude, fake_anthropic):
    fake_anthropic.default = slow_reply(60.0)
    started = time.monotonic()
    with pytest.raises(RemoteAPIError, match=r"no answer within 0.3 s \(2 attempt\(s\)\)"):
        make_claude(timeout=0.3, max_retries=1).chat([user(TextBlock(text="hi"))])

    assert len(fake_anthropic.messages_requests()) == 2
    # Far below one delayed answer (60 s): every attempt was cut at its timeout.
    assert time.monotonic() - started < 30


def test_wrong_key_is_not_retried_and_says_what_to_check(fake_anthropic, make_claude):
    with pytest.raises(RemoteAPIError, match="check ANTHROPIC_API_KEY") as caught:
        make_claude(api_key="sk-ant-wrong").chat([user(TextBlock(text="hi"))])
    assert caught.value.status == 401
    assert len(fake_anthropic.messages_requests()) == 1


def test_unreachable_endpoint_is_a_remote_api_error(fake_anthropic):
    llm = ClaudeMultimodalLLM(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(RemoteAPIError, match="cannot reach the API"):
        llm.chat([user(TextBlock(text="hi"))])


# -- streaming, sync and async -------------------------------------------------------------


def test_streaming_yields_the_deltas_in_order_then_usage(make_claude, fake_anthropic):
    fake_anthropic.enqueue(text_reply("The loss ", "is cross-", "entropy.", output_tokens=9))
    chunks = list(make_claude().stream_chat([user(TextBlock(text="hi"))]))

    assert [c.delta for c in chunks] == ["The loss ", "is cross-", "entropy.", ""]
    assert [c.message.content for c in chunks][-2:] == ["The loss is cross-entropy."] * 2
    assert chunks[-1].raw["usage"] == {"input_tokens": 42, "output_tokens": 9}
    assert fake_anthropic.messages_requests()[0].body["stream"] is True


def test_a_stream_failing_midway_raises_a_remote_api_error(make_claude, fake_anthropic):
    fake_anthropic.enqueue(text_reply("Partial", "never", stream_error="overloaded_error"))
    received = []
    with pytest.raises(RemoteAPIError, match=r"overloaded_error.*try again later"):
        for chunk in make_claude().stream_chat([user(TextBlock(text="hi"))]):
            received.append(chunk.delta)
    assert received == ["Partial"]


def test_usage_is_recorded_for_token_counting(make_claude, fake_anthropic):
    fake_anthropic.enqueue(text_reply("ok", input_tokens=1234, output_tokens=56))
    answer = make_claude().chat([user(TextBlock(text="hi"))])
    assert answer.raw["usage"] == {"input_tokens": 1234, "output_tokens": 56}
    assert answer.additional_kwargs == {"input_tokens": 1234, "output_tokens": 56}


def run_sync(llm: ClaudeMultimodalLLM, mode: str, messages: list[ChatMessage]) -> str:
    if mode == "chat":
        return llm.chat(messages).message.content or ""
    if mode == "complete":
        return llm.complete(messages[-1].content or "").text
    if mode == "stream_chat":
        return "".join(c.delta or "" for c in llm.stream_chat(messages))
    return "".join(c.delta or "" for c in llm.stream_complete(messages[-1].content or ""))


async def run_async(llm: ClaudeMultimodalLLM, mode: str, messages: list[ChatMessage]) -> str:
    if mode == "chat":
        return (await llm.achat(messages)).message.content or ""
    if mode == "complete":
        return (await llm.acomplete(messages[-1].content or "")).text
    if mode == "stream_chat":
        return "".join([c.delta or "" async for c in await llm.astream_chat(messages)])
    return "".join(
        [c.delta or "" async for c in await llm.astream_complete(messages[-1].content or "")]
    )


@pytest.mark.parametrize("mode", ["chat", "complete", "stream_chat", "stream_complete"])
def test_sync_and_async_send_the_same_request_and_agree(make_claude, fake_anthropic, mode, frames):
    llm = make_claude()
    messages = agreement_conversation(mode, frames[0])
    fake_anthropic.enqueue(text_reply("A ", "blue ", "frame."), text_reply("A ", "blue ", "frame."))

    sync_text = run_sync(llm, mode, messages)
    async_text = asyncio.run(run_async(llm, mode, messages))

    assert sync_text == async_text == "A blue frame."
    sync_request, async_request = fake_anthropic.messages_requests()
    assert sync_request.body == async_request.body
    assert async_request.headers["x-stainless-async"].startswith("async")


def test_async_errors_are_translated_like_sync_ones(make_claude, fake_anthropic):
    fake_anthropic.default = error_reply(500)
    with pytest.raises(RemoteAPIError, match="2 attempt"):
        asyncio.run(make_claude(max_retries=1).achat([user(TextBlock(text="hi"))]))


# -- the key -------------------------------------------------------------------------------


def test_key_comes_from_the_environment_and_base_url_too(fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    answer = ClaudeMultimodalLLM().chat([user(TextBlock(text="hi"))])
    assert answer.message.content == "The answer."
    assert len(fake_anthropic.messages_requests()) == 1


def test_missing_key_is_a_clear_error(fake_anthropic):
    with pytest.raises(AnswerError, match="set ANTHROPIC_API_KEY or pass api_key="):
        ClaudeMultimodalLLM()


def test_the_key_never_leaks(make_claude, fake_anthropic, caplog):
    key = fake_anthropic.api_key
    llm = make_claude()
    caplog.set_level(logging.DEBUG)
    for name in ("anthropic", "httpx2", "httpx", "llama_index_video"):
        caplog.set_level(logging.DEBUG, logger=name)

    llm.chat([user(TextBlock(text="hi"))])
    list(llm.stream_chat([user(TextBlock(text="hi"))]))
    errors = []
    for reply in (error_reply(500, message=f"echo {key}"), slow_reply(5.0)):
        fake_anthropic.default = reply
        with pytest.raises(RemoteAPIError) as caught:
            make_claude(timeout=0.3, max_retries=0).chat([user(TextBlock(text="hi"))])
        errors.append(caught.value)

    assert fake_anthropic.messages_requests()[0].headers["authorization"] == f"Bearer {key}"
    exposed = [*exposures(llm), caplog.text, *(f"{error!s} {error!r}" for error in errors)]
    assert caplog.text  # the loggers did speak
    assert not [text for text in exposed if key in text]


# -- inside LlamaIndex's own multimodal query engine ----------------------------------------


class FixedRetriever(BaseRetriever):
    def __init__(self, nodes: list[NodeWithScore]) -> None:
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.nodes


def test_works_in_retriever_query_engine_multimodal_mode(make_claude, fake_anthropic, big_frame):
    nodes = [
        NodeWithScore(
            node=TextNode(
                text="We use cross-entropy.", metadata={"label": "[talk.mp4 01:34-01:41]"}
            ),
            score=0.9,
        ),
        NodeWithScore(
            node=ImageNode(image_path=str(big_frame), metadata={"label": "[talk.mp4 01:36]"}),
            score=0.8,
        ),
    ]
    engine = RetrieverQueryEngine.from_args(
        FixedRetriever(nodes),
        llm=make_claude(),
        multimodal=True,
        chat_content_qa_template=VIDEO_QA_TEMPLATE,
    )
    fake_anthropic.enqueue(text_reply("Cross-entropy [talk.mp4 01:34-01:41]."))

    response = engine.query("Which loss?")
    asyncio.run(engine.aquery("Which loss?"))

    assert str(response) == "Cross-entropy [talk.mp4 01:34-01:41]."
    sync_request, async_request = fake_anthropic.messages_requests()
    assert sync_request.body == async_request.body
    assert sync_request.body["system"] == SYSTEM_PROMPT
    text = " ".join(p["text"] for p in content_of(sync_request) if p["type"] == "text")
    assert "label: [talk.mp4 01:34-01:41]" in text
    assert "We use cross-entropy." in text
    assert "Question: Which loss?" in text
    (image,) = [decoded(part) for part in image_parts(sync_request)]
    assert max(image.size) == 1568


# -- the real API ------------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY not set")
def test_live_claude_reads_a_frame(tmp_path):
    frame = tmp_path / "red.jpg"
    Image.new("RGB", (640, 360), (220, 20, 20)).save(frame)
    llm = ClaudeMultimodalLLM(max_tokens=20)
    message = user(
        TextBlock(text="What is the dominant colour of this image? Answer with one word."),
        ImageBlock(path=frame),
    )
    answer = llm.chat([message])
    assert "red" in (answer.message.content or "").lower()
    assert answer.raw["usage"]["input_tokens"] > 0


@pytest.mark.parametrize("padding", ["\n", " ", " \r\n"], ids=["newline", "space", "crlf"])
def test_a_pasted_key_is_stripped_and_masked_when_echoed(fake_anthropic, monkeypatch, padding):
    key = fake_anthropic.api_key
    monkeypatch.setenv("ANTHROPIC_API_KEY", key + padding)
    fake_anthropic.echo_headers = True
    fake_anthropic.enqueue(error_reply(400))
    llm = ClaudeMultimodalLLM(base_url=fake_anthropic.url, max_retries=0)
    with pytest.raises(RemoteAPIError) as caught:
        llm.chat([user(TextBlock(text="hi"))])
    assert fake_anthropic.messages_requests()[0].headers["authorization"] == f"Bearer {key}"
    assert "'authorization': 'Bearer ***'" in str(caught.value)
    assert key not in scrubbed_traceback(caught.value)  # the SDK's own error included
