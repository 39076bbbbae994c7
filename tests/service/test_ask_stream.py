"""``POST /api/ask/stream``: the answer as server-sent events while the model writes,
then the same answer object ``POST /api/ask`` gives, its citations checked at the end.

The model is Claude through the package's adapter, talking to a local stand-in of the
Messages API (tests/fakes/anthropic_server.py) that streams each scripted chunk as one
``content_block_delta``, and Gemini through google-genai, talking to a stand-in of
``streamGenerateContent`` (tests/answering/gemini_streaming.py).
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.answering.extractive import extractive_answer
from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM
from llama_index_video.service import ask_with
from llama_index_video.service.app import create_app
from tests.answering.gemini_streaming import StreamingGeminiServer
from tests.fakes.anthropic_server import Reply, text_reply
from tests.service.conftest import LOOPBACK

UVC = "how much ultraviolet C radiation is absorbed"
GEMINI_KEY = "AIzaSy-stream-SECRET-0123456789abcdef"


def events(response) -> list[tuple[str, dict]]:
    """The ``(event, data)`` pairs of a text/event-stream body."""
    assert response.headers["content-type"].startswith("text/event-stream")
    found = []
    for block in response.text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((fields["event"], json.loads(fields["data"])))
    return found


@pytest.fixture
def claude_app(example_index, fake_anthropic):
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, timeout=5.0
    )
    with TestClient(create_app(example_index, answer=ask_with(claude)), base_url=LOOPBACK) as c:
        yield c, fake_anthropic, example_index.search(UVC)[0]


def test_the_answer_streams_as_written_and_ends_checked_like_ask(claude_app):
    client, server, hit = claude_app
    chunks = ("All of it: ", "one hundred ", f"percent {hit.label}.", " See [nowhere.mp4 00:01].")
    server.enqueue(text_reply(*chunks), text_reply(*chunks))
    streamed = events(client.post("/api/ask/stream", json={"question": UVC}))
    whole = client.post("/api/ask", json={"question": UVC}).json()

    names = [name for name, _ in streamed]
    assert names == ["start", "delta", "delta", "delta", "delta", "answer"]
    assert [data["text"] for name, data in streamed if name == "delta"] == list(chunks)
    answer = streamed[-1][1]
    assert answer == whole  # the same object as /api/ask, media links included
    # checked as a whole: the text streamed, with the citation nothing retrieved marked
    assert answer["answer"] == "".join(chunks).replace("00:01]", "00:01 (unverified)]")
    assert [c["label"] for c in answer["citations"]] == [hit.label]
    assert answer["citations"][0]["media_url"].startswith("/media/")
    assert answer["unverified_citations"] == ["[nowhere.mp4 00:01]"]
    first, second = server.messages_requests()
    assert first.body.get("stream") is True and not second.body.get("stream")
    assert server.api_key not in json.dumps(streamed)


def test_a_model_failing_mid_answer_ends_the_stream_with_one_line(claude_app):
    client, server, _ = claude_app
    server.enqueue(Reply(chunks=("Half an ", "answer"), stream_error="overloaded_error"))
    streamed = events(client.post("/api/ask/stream", json={"question": UVC}))
    assert streamed[0][0] == "start" and streamed[-1][0] == "error"
    assert "answer" not in [name for name, _ in streamed]
    error = streamed[-1][1]
    assert error["status"] == 502 and error["detail"] and "\n" not in error["detail"]
    assert server.api_key not in error["detail"]


def test_without_a_model_the_extractive_answer_is_one_piece(example_index):
    with TestClient(create_app(example_index), base_url=LOOPBACK) as client:
        streamed = events(client.post("/api/ask/stream", json={"question": UVC, "top_k": 3}))
        whole = client.post("/api/ask", json={"question": UVC, "top_k": 3}).json()
    deltas = [data["text"] for name, data in streamed if name == "delta"]
    assert len(deltas) == 1 and streamed[-1] == ("answer", whole)
    assert deltas[0] == whole["answer"] and whole["citations"]


def test_an_answerer_that_cannot_stream_sends_its_answer_whole(example_index):
    def answer(index, question, top_k):
        return extractive_answer(question.upper(), index.search(question, top_k=top_k))

    with TestClient(create_app(example_index, answer=answer), base_url=LOOPBACK) as client:
        streamed = events(client.post("/api/ask/stream", json={"question": UVC}))
    assert streamed[-1][0] == "answer" and streamed[-1][1]["question"] == UVC.upper()


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [({"question": "  "}, 422, "question"), ({"question": UVC, "top_k": 0}, 422, "top_k")],
)
def test_a_bad_request_is_a_plain_error_not_a_stream(example_index, body, status, says):
    with TestClient(create_app(example_index), base_url=LOOPBACK) as client:
        response = client.post("/api/ask/stream", json=body)
    assert response.status_code == status and says in response.json()["detail"]


def test_gemini_streams_the_same_way(example_index, monkeypatch):
    """The same events with Gemini through google-genai, its stream split in several
    server-sent events by a stand-in of ``streamGenerateContent``."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    hit = example_index.search(UVC)[0]
    chunks = ("Nearly all ", "of it ", f"{hit.label}.")
    with StreamingGeminiServer(api_key=GEMINI_KEY) as server:
        gemini = GeminiMultimodalLLM(api_key=GEMINI_KEY, base_url=server.base_url, timeout=5.0)
        server.queue_stream(*chunks)
        app = create_app(example_index, answer=ask_with(gemini))
        with TestClient(app, base_url=LOOPBACK) as client:
            streamed = events(client.post("/api/ask/stream", json={"question": UVC}))
    assert [data["text"] for name, data in streamed if name == "delta"] == list(chunks)
    name, answer = streamed[-1]
    assert name == "answer" and answer["answer"] == "".join(chunks)
    assert [c["label"] for c in answer["citations"]] == [hit.label]
    assert GEMINI_KEY not in json.dumps(streamed)
