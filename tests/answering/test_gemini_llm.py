"""GeminiMultimodalLLM against the fake Gemini API, through the real google-genai client.

Every test asserts on what the SDK put on the wire (or what the fake's Files API
holds); sync and async paths are run through the same assertions.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import io
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import SummaryIndex
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ChatResponse,
    DocumentBlock,
    ImageBlock,
    MessageRole,
    TextBlock,
    VideoBlock,
)
from llama_index.core.bridge.pydantic import ValidationError
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import ImageNode, TextNode
from PIL import Image

from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM
from llama_index_video.answering.prompts import (
    SYSTEM_PROMPT,
    VIDEO_QA_TEMPLATE,
    ContextItem,
    build_messages,
)
from llama_index_video.api_keys import scrubbed_traceback
from llama_index_video.errors import AnswerError, RemoteAPIError
from llama_index_video.media.clips import Clip, cut_clips
from tests.answering.gemini_streaming import StreamingGeminiServer
from tests.answering.llm_checks import agreement_conversation, exposures
from tests.fakes.gemini_server import Fault
from tests.media.synthetic import write_audio, write_video

SECRET = "AIzaSy-answer-SECRET-0123456789abcdef"
GEMINI_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL")
CHAT_METHODS = ["chat", "achat", "stream_chat", "astream_chat"]


@pytest.fixture
def fake_gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[StreamingGeminiServer]:
    """A running fake Gemini API; the developer's own Gemini settings are hidden."""
    for name in GEMINI_ENV:
        monkeypatch.delenv(name, raising=False)
    with StreamingGeminiServer(api_key=SECRET) as server:
        yield server


@pytest.fixture
def make_gemini(fake_gemini: StreamingGeminiServer) -> Callable[..., GeminiMultimodalLLM]:
    """Build a ``GeminiMultimodalLLM`` talking to the fake API, with fast retries."""
    defaults: dict[str, Any] = {
        "api_key": SECRET,
        "base_url": fake_gemini.base_url,
        "retry_initial_delay": 0.001,
        "retry_max_delay": 0.01,
        "file_poll_interval": 0.01,
        "timeout": 5.0,
    }
    return lambda **options: GeminiMultimodalLLM(**(defaults | options))


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Clip:
    """A 3 s H.264/AAC clip cut from a generated recording, as retrieval hands it over."""
    folder = tmp_path_factory.mktemp("gemini answer media")
    talk = write_video(folder / "talk.mp4", seconds=5.0, gop=10)
    clips = cut_clips(talk, out_dir=folder, content_hash="a" * 64, max_seconds=3, overlap_seconds=1)
    return next(iter(clips))


def user(*blocks: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=list(blocks))


def respond(llm: GeminiMultimodalLLM, method: str, messages: Sequence[ChatMessage]) -> Any:
    """Call one chat or completion method, sync or async; the final response (or chunks)."""

    async def go() -> Any:
        arg: Any = messages[-1].content if "complete" in method else messages
        result = getattr(llm, method)(arg)
        if inspect.isawaitable(result):
            result = await result
        if "stream" not in method:
            return result
        if hasattr(result, "__aiter__"):
            return [chunk async for chunk in result]
        return list(result)

    return asyncio.run(go())


def answer_text(llm: GeminiMultimodalLLM, method: str, messages: Sequence[ChatMessage]) -> str:
    result = respond(llm, method, messages)
    if isinstance(result, list):
        return "".join(chunk.delta or "" for chunk in result)
    return str(result.message.content if isinstance(result, ChatResponse) else result.text)


def user_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    (turn,) = body["contents"]
    assert turn["role"] == "user"
    return turn["parts"]


def wire(mapping: dict[str, Any], snake: str) -> Any:
    """A field of the wire JSON, which the SDK writes in snake_case or camelCase."""
    camel = snake.split("_")[0] + "".join(word.title() for word in snake.split("_")[1:])
    return mapping[snake] if snake in mapping else mapping[camel]


def inline_bytes(part: dict[str, Any]) -> tuple[str, bytes]:
    data = part["inlineData"]
    return wire(data, "mime_type"), base64.urlsafe_b64decode(data["data"])


def jpeg(part: dict[str, Any]) -> Image.Image:
    mime, data = inline_bytes(part)
    assert mime == "image/jpeg"
    image = Image.open(io.BytesIO(data))
    assert image.format == "JPEG"
    return image


# -- what the request carries -----------------------------------------------------------


def test_request_carries_system_instruction_labelled_transcript_and_bounded_frame(
    make_gemini, fake_gemini, big_frame, talk_transcript
):
    shot = ImageNode(
        text="On screen: Loss curve",
        image_path=str(big_frame),
        metadata={"source": "/media/talk.mp4", "modality": "frame", "start_s": 96.0},
    )
    items = [ContextItem.from_node(talk_transcript), ContextItem.from_node(shot)]
    fake_gemini.queue_generate("Cross-entropy [talk.mp4 01:34-01:41].")

    answer = make_gemini(max_tokens=300).chat(build_messages("Which loss?", items))

    assert answer.message.content == "Cross-entropy [talk.mp4 01:34-01:41]."
    (request,) = fake_gemini.requests_to("generate")
    assert request.path.endswith("/models/gemini-2.5-flash:generateContent")
    body = request.json
    assert body["systemInstruction"]["parts"] == [{"text": SYSTEM_PROMPT}]
    assert body["generationConfig"]["maxOutputTokens"] == 300
    parts = user_parts(body)
    texts = [part["text"] for part in parts if "text" in part]
    assert "[talk.mp4 01:34-01:41] transcript:\nWe train with cross-entropy." in texts
    assert "[talk.mp4 01:36] video frame:\nOn screen: Loss curve" in texts
    assert texts[-1] == "Question: Which loss?"
    (frame_at,) = [i for i, part in enumerate(parts) if "inlineData" in part]
    assert parts[frame_at - 1]["text"].startswith("[talk.mp4 01:36]")  # the frame follows its label
    assert jpeg(parts[frame_at]).size == (1536, 768)  # long edge bounded, aspect ratio kept


def test_image_count_is_bounded_first_kept_and_losses_warned(
    make_gemini, fake_gemini, frames, tmp_path, caplog
):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    blocks = [
        b for i, f in enumerate(frames) for b in (TextBlock(text=f"[v {i}]"), ImageBlock(path=f))
    ]
    extra = [ImageBlock(path=broken), DocumentBlock(data=b"%PDF-1.4", title="notes")]
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        make_gemini(max_images=3).chat([user(ImageBlock(path=broken), *blocks, *extra)])

    parts = user_parts(fake_gemini.requests_to("generate")[0].json)
    reds = [jpeg(part).getpixel((0, 0))[0] for part in parts if "inlineData" in part]
    assert len(reds) == 2  # the unreadable first image used one of the three places
    assert reds == sorted(reds)
    assert sum("text" in part for part in parts) == 12
    assert "first 3 of 14 images (max_images=3)" in caplog.text
    assert "broken.jpg" in caplog.text
    assert "1 document block(s) Gemini cannot take" in caplog.text


@pytest.mark.parametrize("kind", ["video clip", "video bytes", "audio"])
def test_small_media_goes_inline(make_gemini, fake_gemini, clip, tmp_path, kind):
    if kind == "video clip":
        block: Any = VideoBlock(path=clip.path, video_mimetype=clip.mimetype, fps=2)
        expected = ("video/mp4", clip.path.read_bytes())
    elif kind == "video bytes":
        block = VideoBlock(video=clip.path.read_bytes())
        expected = ("video/mp4", clip.path.read_bytes())
    else:
        tone = write_audio(tmp_path / "tone.mp3", seconds=1.0)
        block = AudioBlock(path=tone)
        expected = ("audio/mp3", tone.read_bytes())

    make_gemini().chat([user(block, TextBlock(text="What happens in this clip?"))])

    media, question = user_parts(fake_gemini.requests_to("generate")[0].json)
    assert inline_bytes(media) == expected
    assert media.get("videoMetadata") == ({"fps": 2.0} if kind == "video clip" else None)
    assert question == {"text": "What happens in this clip?"}
    assert fake_gemini.requests_to("upload") == []


@pytest.mark.parametrize("method", CHAT_METHODS)
def test_large_clip_is_uploaded_polled_until_active_and_deleted(
    make_gemini, fake_gemini, clip, method
):
    fake_gemini.processing_polls = 2
    llm = make_gemini(max_inline_bytes=1000)
    message = user(VideoBlock(path=clip.path, video_mimetype=clip.mimetype), TextBlock(text="Q?"))

    assert answer_text(llm, method, [message]) == "ok"

    (stored,) = fake_gemini.files.values()
    assert (stored.data, stored.mime_type, stored.display_name) == (
        clip.path.read_bytes(),
        "video/mp4",
        clip.path.name,
    )
    media, _ = user_parts(fake_gemini.requests_to("generate")[0].json)
    assert wire(media["fileData"], "file_uri").endswith(stored.name)
    assert wire(media["fileData"], "mime_type") == "video/mp4"
    assert len(fake_gemini.requests_to("file_get")) == 2  # polled while PROCESSING
    assert fake_gemini.live_files() == []  # deleted after the answer
    endpoints = [r.endpoint for r in fake_gemini.requests if r.endpoint != "file_get"]
    assert endpoints == ["upload", "upload", "generate", "file_delete"]


@pytest.mark.parametrize("method", ["chat", "astream_chat"])
def test_upload_is_deleted_when_the_answer_fails(make_gemini, fake_gemini, clip, method):
    fake_gemini.fail("generate", 403)
    llm = make_gemini(max_inline_bytes=1000)
    with pytest.raises(RemoteAPIError, match="403"):
        respond(llm, method, [user(VideoBlock(path=clip.path), TextBlock(text="Q?"))])
    assert len(fake_gemini.files) == 1
    assert fake_gemini.live_files() == []


def test_a_clip_the_files_api_cannot_process_is_a_clear_error(make_gemini, fake_gemini, clip):
    fake_gemini.file_final_state = "FAILED"
    with pytest.raises(RemoteAPIError, match=f"could not process {clip.path.name}"):
        make_gemini(max_inline_bytes=1000).chat([user(VideoBlock(path=clip.path))])
    assert fake_gemini.requests_to("generate") == []
    assert fake_gemini.live_files() == []


def test_clips_are_bounded_per_request(make_gemini, fake_gemini, clip, caplog):
    blocks = [VideoBlock(path=clip.path), VideoBlock(path=clip.path), TextBlock(text="Q?")]
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        make_gemini(max_clips=1).chat([user(*blocks)])
    parts = user_parts(fake_gemini.requests_to("generate")[0].json)
    assert [next(iter(part)) for part in parts] == ["inlineData", "text"]
    assert "first 1 of 2 clips (max_clips=1)" in caplog.text


def test_roles_system_instruction_and_options_reach_the_request(make_gemini, fake_gemini):
    llm = make_gemini(model="gemini-2.5-pro", temperature=0.2, thinking_budget=128)
    llm.chat(
        [
            ChatMessage(role=MessageRole.SYSTEM, content="Cite labels."),
            ChatMessage(role=MessageRole.DEVELOPER, content="Be brief."),
            ChatMessage(role=MessageRole.USER, content="First."),
            ChatMessage(role=MessageRole.USER, content="Second."),
            ChatMessage(role=MessageRole.ASSISTANT, content="Noted."),
            ChatMessage(role=MessageRole.USER, content="  "),
            ChatMessage(role=MessageRole.USER, content="Go."),
        ],
        stop_sequences=["END"],
    )
    (request,) = fake_gemini.requests_to("generate")
    assert request.path.endswith("/models/gemini-2.5-pro:generateContent")
    body = request.json
    assert body["systemInstruction"]["parts"] == [{"text": "Cite labels.\n\nBe brief."}]
    assert [(t["role"], [p["text"] for p in t["parts"]]) for t in body["contents"]] == [
        ("user", ["First.", "Second."]),
        ("model", ["Noted."]),
        ("user", ["Go."]),
    ]
    config = body["generationConfig"]
    assert config["temperature"] == 0.2
    assert config["stopSequences"] == ["END"]
    assert config["thinkingConfig"] == {"thinking_budget": 128}


@pytest.mark.parametrize(
    ("messages", "kwargs", "error"),
    [
        ([], {}, "no text or media"),
        ([ChatMessage(role=MessageRole.SYSTEM, content="only this")], {}, "no text or media"),
        ([ChatMessage(role=MessageRole.TOOL, content="42")], {}, "role 'tool'"),
        ([ChatMessage(content="hi")], {"not_an_option": 1}, "invalid generation options"),
    ],
)
def test_requests_that_cannot_be_sent_are_answer_errors(
    make_gemini, fake_gemini, messages, kwargs, error
):
    with pytest.raises(AnswerError, match=error):
        make_gemini().chat(messages, **kwargs)
    assert fake_gemini.requests == []


@pytest.mark.parametrize(
    "option",
    [
        {"max_images": -1},
        {"max_image_edge": 4000},
        {"timeout": 0},
        {"max_clips": 11},
        {"retry_initial_delay": 2.0, "retry_max_delay": 1.0},
    ],
)
def test_invalid_options_are_rejected_on_construction(option):
    with pytest.raises(ValidationError):
        GeminiMultimodalLLM(api_key="k", **option)


# -- answers Gemini withholds, usage -----------------------------------------------------


@pytest.mark.parametrize(
    ("body", "blocked"),
    [
        ({"promptFeedback": {"blockReason": "SAFETY"}}, "SAFETY"),
        ({"candidates": [{"finishReason": "PROHIBITED_CONTENT"}]}, "PROHIBITED_CONTENT"),
        ({"candidates": []}, None),
    ],
)
def test_withheld_or_empty_answers_are_empty_not_a_crash(
    make_gemini, fake_gemini, caplog, body, blocked
):
    fake_gemini.queue_generate(body)
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        answer = make_gemini().chat([user(TextBlock(text="hi"))])
    assert answer.message.content == ""
    assert answer.raw["blocked"] == blocked
    assert ("withheld the answer" if blocked else "returned no text") in caplog.text


def test_a_stream_stopped_for_recitation_keeps_its_text_and_is_flagged(make_gemini, fake_gemini):
    fake_gemini.queue_stream("Partial ", finish="RECITATION")
    chunks = list(make_gemini().stream_chat([user(TextBlock(text="hi"))]))
    assert [c.delta for c in chunks] == ["Partial ", ""]
    assert chunks[-1].raw["blocked"] == "RECITATION"


def test_usage_is_recorded_for_token_counting(make_gemini, fake_gemini):
    fake_gemini.queue_stream("ok", prompt=1234, output=56, thoughts=100)
    final = list(make_gemini().stream_chat([user(TextBlock(text="hi"))]))[-1]
    usage = {"input_tokens": 1234, "output_tokens": 156, "thinking_tokens": 100}
    assert final.raw["usage"] == final.additional_kwargs == usage
    assert final.raw["finish_reason"] == "STOP"


# -- streaming, sync and async -------------------------------------------------------------


@pytest.mark.parametrize("method", ["stream_chat", "astream_chat"])
def test_streaming_yields_the_deltas_in_order_then_usage(make_gemini, fake_gemini, method):
    fake_gemini.queue_stream("The loss ", "is cross-", "entropy.", output=9)
    chunks = respond(make_gemini(), method, [user(TextBlock(text="hi"))])

    assert [c.delta for c in chunks] == ["The loss ", "is cross-", "entropy.", ""]
    assert [c.message.content for c in chunks] == [
        "The loss ",
        "The loss is cross-",
        "The loss is cross-entropy.",
        "The loss is cross-entropy.",
    ]
    assert chunks[-1].raw["usage"]["output_tokens"] == 9
    (request,) = fake_gemini.requests_to("generate")
    assert request.path.endswith(":streamGenerateContent")
    assert request.query["alt"] == ["sse"]


@pytest.mark.parametrize("kind", ["chat", "complete", "stream_chat", "stream_complete"])
def test_sync_and_async_send_the_same_request_and_agree(make_gemini, fake_gemini, kind, frames):
    llm = make_gemini()
    messages = agreement_conversation(kind, frames[0])
    for _ in range(2):
        if kind.startswith("stream"):
            fake_gemini.queue_stream("A ", "blue ", "frame.")
        else:
            fake_gemini.queue_generate("A blue frame.")

    sync_text = answer_text(llm, kind, messages)
    async_text = answer_text(llm, "a" + kind, messages)

    assert sync_text == async_text == "A blue frame."
    sync_request, async_request = fake_gemini.requests_to("generate")
    assert sync_request.json == async_request.json
    assert sync_request.path == async_request.path


# -- retries and failures ----------------------------------------------------------------


@pytest.mark.parametrize("method", CHAT_METHODS)
def test_rate_limit_is_retried_then_answers(make_gemini, fake_gemini, method):
    fake_gemini.fail("generate", 429)
    fake_gemini.queue_stream("Recovered.")
    fake_gemini.queue_generate("Recovered.")
    assert answer_text(make_gemini(), method, [user(TextBlock(text="hi"))]) == "Recovered."
    assert len(fake_gemini.requests_to("generate")) == 2


@pytest.mark.parametrize("method", CHAT_METHODS)
def test_persistent_server_error_is_reported_after_bounded_attempts(
    make_gemini, fake_gemini, method
):
    fake_gemini.fail("generate", *[Fault(status=500, message="boom\ninternal")] * 10)
    with pytest.raises(RemoteAPIError) as caught:
        respond(make_gemini(max_retries=2), method, [user(TextBlock(text="hi"))])

    assert len(fake_gemini.requests_to("generate")) == 3
    error = caught.value
    assert (error.service, error.status) == ("Gemini API", 500)
    assert "\n" not in str(error)
    assert "HTTP 500 INTERNAL: boom internal; 3 attempt(s)" in str(error)
    assert "try again later" in str(error)


@pytest.mark.parametrize(
    ("method", "attempts"),
    [("chat", 2), ("achat", 2), ("stream_chat", 2), ("astream_chat", 1)],  # see the module
)
def test_timeouts_are_retried_boundedly_then_reported(make_gemini, fake_gemini, method, attempts):
    fake_gemini.fail("generate", Fault(delay=60.0), Fault(delay=60.0), Fault(delay=60.0))
    started = time.monotonic()
    with pytest.raises(
        RemoteAPIError, match=rf"no answer within 0.3 s \({attempts} attempt\(s\)\)"
    ):
        respond(make_gemini(timeout=0.3, max_retries=1), method, [user(TextBlock(text="hi"))])
    assert len(fake_gemini.requests_to("generate")) == attempts
    # Far below one delayed answer (60 s): every attempt was cut at its timeout.
    assert time.monotonic() - started < 30


def test_wrong_key_is_not_retried_and_says_what_to_check(make_gemini, fake_gemini):
    with pytest.raises(RemoteAPIError, match=r"1 attempt\(s\)\); check GEMINI_API_KEY") as caught:
        make_gemini(api_key="AIza-wrong").chat([user(TextBlock(text="hi"))])
    assert caught.value.status == 400
    assert len(fake_gemini.requests_to("generate")) == 1


def test_unreachable_endpoint_is_a_remote_api_error(make_gemini):
    llm = make_gemini(base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(RemoteAPIError, match="cannot reach the API"):
        llm.chat([user(TextBlock(text="hi"))])


# -- the key -------------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_key_and_endpoint_come_from_the_environment(fake_gemini, monkeypatch, variable):
    monkeypatch.setenv(variable, SECRET)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_gemini.base_url)
    assert GeminiMultimodalLLM().chat([user(TextBlock(text="hi"))]).message.content == "ok"
    assert fake_gemini.requests_to("generate")[0].headers["x-goog-api-key"] == SECRET


def test_missing_key_is_a_clear_error(fake_gemini):
    with pytest.raises(AnswerError, match=r"set GEMINI_API_KEY \(or GOOGLE_API_KEY\)"):
        GeminiMultimodalLLM()


def test_the_key_never_leaks(make_gemini, fake_gemini, clip, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("google_genai", "httpx", "httpx2", "aiohttp", "llama_index_video"):
        caplog.set_level(logging.DEBUG, logger=name)
    llm = make_gemini(max_inline_bytes=1000, max_retries=0)
    message = user(VideoBlock(path=clip.path), TextBlock(text="hi"))

    llm.chat([message])
    list(llm.stream_chat([message]))
    asyncio.run(llm.achat([message]))
    errors = []
    for fault in (Fault(status=500, message=f"echo {SECRET}"), Fault(delay=5.0)):
        fake_gemini.fail("generate", fault)
        with pytest.raises(RemoteAPIError) as caught:
            make_gemini(timeout=0.3, max_retries=0).chat([message])
        errors.append(caught.value)

    assert fake_gemini.requests_to("generate")[0].headers["x-goog-api-key"] == SECRET
    exposed = [*exposures(llm), caplog.text, *(f"{error!s} {error!r}" for error in errors)]
    assert caplog.text  # the loggers did speak
    assert not [text for text in exposed if SECRET in text]
    assert "echo ***" in str(errors[0])


@pytest.mark.parametrize("padding", ["\n", " ", " \r\n"], ids=["newline", "space", "crlf"])
def test_a_pasted_key_is_stripped_and_masked_when_echoed(fake_gemini, monkeypatch, padding):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET + padding)
    fake_gemini.echo_headers = True
    fake_gemini.fail("generate", 403)
    llm = GeminiMultimodalLLM(base_url=fake_gemini.base_url, max_retries=0)
    with pytest.raises(RemoteAPIError) as caught:
        llm.chat([user(TextBlock(text="hi"))])
    assert fake_gemini.requests_to("generate")[0].headers["x-goog-api-key"] == SECRET
    assert "you sent {'x-goog-api-key': '***'" in str(caught.value)
    assert SECRET not in scrubbed_traceback(caught.value)  # the SDK's own error included


# -- inside LlamaIndex's own multimodal query engine ----------------------------------------


def test_works_in_retriever_query_engine_multimodal_mode(make_gemini, fake_gemini, big_frame):
    nodes = [
        TextNode(text="We use cross-entropy.", metadata={"label": "[talk.mp4 01:34-01:41]"}),
        ImageNode(image_path=str(big_frame), metadata={"label": "[talk.mp4 01:36]"}),
    ]
    engine = RetrieverQueryEngine.from_args(
        SummaryIndex(nodes).as_retriever(),
        llm=make_gemini(),
        multimodal=True,
        chat_content_qa_template=VIDEO_QA_TEMPLATE,
    )
    fake_gemini.queue_generate("Cross-entropy [talk.mp4 01:34-01:41].")

    response = engine.query("Which loss?")
    asyncio.run(engine.aquery("Which loss?"))

    assert str(response) == "Cross-entropy [talk.mp4 01:34-01:41]."
    sync_request, async_request = fake_gemini.requests_to("generate")
    assert sync_request.json == async_request.json
    body = sync_request.json
    assert body["systemInstruction"]["parts"] == [{"text": SYSTEM_PROMPT}]
    text = " ".join(part["text"] for part in user_parts(body) if "text" in part)
    assert "label: [talk.mp4 01:34-01:41]" in text
    assert "Question: Which loss?" in text
    (image,) = [jpeg(part) for part in user_parts(body) if "inlineData" in part]
    assert max(image.size) == 1536


# -- the real API ------------------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("GEMINI_API_KEY"), reason="GEMINI_API_KEY not set")
def test_live_gemini_reads_a_frame_and_a_clip(tmp_path: Path, clip: Clip):
    frame = tmp_path / "red.jpg"
    Image.new("RGB", (640, 360), (220, 20, 20)).save(frame)
    llm = GeminiMultimodalLLM(max_tokens=256, thinking_budget=0)
    question = "What is the dominant colour of this image? Answer with one word."
    answer = llm.chat([user(TextBlock(text=question), ImageBlock(path=frame))])
    assert "red" in (answer.message.content or "").lower()
    assert answer.raw["usage"]["input_tokens"] > 0

    video = VideoBlock(path=clip.path, video_mimetype=clip.mimetype)
    answer = llm.chat([user(video, TextBlock(text="What colour is the first second?"))])
    assert answer.message.content
