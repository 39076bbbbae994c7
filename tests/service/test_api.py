"""The API returns the CLI's JSON contracts, and every bad request gets a clear 4xx."""

from __future__ import annotations

import json
import socket

import pytest
from fastapi.testclient import TestClient

from llama_index_video.answering.answerer import AskOptions
from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.answering.extractive import extractive_answer
from llama_index_video.errors import (
    AnswerError,
    IndexCompatibilityError,
    MissingDependencyError,
    RemoteAPIError,
)
from llama_index_video.service import ask_with
from llama_index_video.service.app import create_app
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply
from tests.service.conftest import LOOPBACK
from tests_support import CHECKOUT, OZONE, TEAM_SYNC

UVC = "how much ultraviolet C radiation is absorbed"
ADDED = {"media_url", "media_type", "frame_url"}


def _contract(items):
    """What ``search --json`` prints, read back as JSON."""
    return json.loads(json.dumps([item.to_dict() for item in items]))


def _without_links(items):
    return [{k: v for k, v in item.items() if k not in ADDED} for item in items]


def test_health(client):
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["files"] == 4
    assert body["live_reload"] is False


@pytest.mark.parametrize("top_k", [1, 5])
def test_search_is_the_search_json_contract_plus_media_links(client, example_index, top_k):
    response = client.get("/api/search", params={"q": UVC, "top_k": top_k})
    assert response.status_code == 200
    hits = response.json()
    assert _without_links(hits) == _contract(example_index.search(UVC, top_k=top_k))
    assert all(set(hit) >= ADDED for hit in hits)
    best = hits[0]
    assert best["source"] == str(OZONE)
    assert best["start"] <= 29.5 <= best["end"]  # "It absorbs one hundred percent of UV-C"
    assert 0.5 < best["confidence"] <= 1.0  # the calibrated chance that it answers
    assert best["media_url"] == "/media/" + example_index.manifest.path(str(OZONE)).content_hash
    assert best["media_type"] == "video/mp4"
    assert best["frame_url"].startswith("/frames/")


def test_search_filters_by_modality(client, example_index):
    hits = client.get(
        "/api/search", params={"q": "when are production deploys", "modality": "text"}
    ).json()
    assert hits and {h["modality"] for h in hits} == {"text"}
    assert {h["media_url"] for h in hits} == {None}  # documents are not media
    expected = example_index.search("when are production deploys", modalities=["text"])
    assert _without_links(hits) == _contract(expected)


def test_search_by_a_speaker_an_index_without_labels_says_why_it_finds_nothing(
    client, example_index
):
    # the example index has no speaker labels: what SPEAKER_1 said is nothing, and why
    assert client.get("/api/search", params={"q": UVC}).json()
    response = client.get("/api/search", params={"q": UVC, "speaker": "1"})
    assert response.status_code == 422
    assert "no speaker labels" in response.json()["detail"]
    assert example_index.search(UVC, speakers=["SPEAKER_1"]) == []


def test_search_keeps_the_moments_of_the_recordings_named_by_source(client):
    migration = "Who will own the migration to the new billing provider?"  # team_sync 00:14
    names = {"source": [TEAM_SYNC.name, CHECKOUT.name]}
    both = client.get("/api/search", params={"q": migration, **names}).json()
    assert both[0]["source"] == str(TEAM_SYNC) and both[0]["start"] <= 14.5 <= both[0]["end"]
    assert {hit["source"] for hit in both} <= {str(TEAM_SYNC), str(CHECKOUT)}
    elsewhere = client.get("/api/search", params={"q": migration, "source": CHECKOUT.name})
    assert {hit["source"] for hit in elsewhere.json()} <= {str(CHECKOUT)}
    unknown = client.get("/api/search", params={"q": migration, "source": "nowhere.mp4"})
    assert unknown.status_code == 422 and "nowhere.mp4" in unknown.json()["detail"]


def test_search_with_nothing_relevant_is_an_empty_list(client):
    assert client.get("/api/search", params={"q": "What is the stock price of Apple?"}).json() == []


def test_ask_is_the_ask_json_object_plus_media_links(client, example_index):
    response = client.post("/api/ask", json={"question": UVC, "top_k": 3})
    assert response.status_code == 200
    body = response.json()
    expected = example_index.ask(UVC, options=AskOptions(top_k=3)).to_dict()  # ask --llm none
    assert {**body, "citations": None, "hits": None} == {
        **expected,
        "citations": None,
        "hits": None,
    }
    assert _without_links(body["hits"]) == expected["hits"]
    assert _without_links(body["citations"]) == json.loads(json.dumps(expected["citations"]))
    assert body["citations"][0]["media_url"].startswith("/media/")


def test_ask_with_claude_cites_moments_the_page_can_play(example_index, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    hit = example_index.search(UVC)[0]
    with FakeAnthropicServer() as server:
        claude = ClaudeMultimodalLLM(api_key=server.api_key, base_url=server.url, timeout=5.0)
        server.enqueue(text_reply(f"All of it: one hundred percent {hit.label}."))
        app = create_app(example_index, answer=ask_with(claude))
        with TestClient(app, base_url=LOOPBACK) as client:
            response = client.post("/api/ask", json={"question": UVC})
    assert response.status_code == 200
    body = response.json()
    assert body["answer"].startswith("All of it") and body["model"] == claude.model
    assert [c["label"] for c in body["citations"]] == [hit.label]
    assert body["citations"][0]["media_url"].startswith("/media/")
    assert server.api_key not in response.text


def test_ask_uses_the_answerer_it_is_given(example_index):
    def answer(index, question, top_k):
        return extractive_answer(question.upper(), index.search(question, top_k=top_k))

    with TestClient(create_app(example_index, answer=answer), base_url=LOOPBACK) as client:
        assert client.post("/api/ask", json={"question": UVC}).json()["question"] == UVC.upper()


BAD_SEARCHES = [
    ("", 422, "q: Field required"),
    ("q=", 422, "blank"),
    ("q=%20%20", 422, "blank"),
    ("q=x&top_k=0", 422, "top_k"),
    ("q=x&top_k=100000", 422, "top_k"),
    ("q=x&top_k=ten", 422, "top_k"),
    ("q=x&modality=hologram", 422, "modality"),
    ("q=x&speaker=%20,%20", 422, "speaker: name speakers"),
    ("q=x&by_chapter=perhaps", 422, "by_chapter"),
    ("q=%FF%FE", 400, "UTF-8"),
    ("q=" + "x" * 2001, 422, "2000"),
    ("q=" + "x" * 20_000, 414, "longer than"),
]


@pytest.mark.parametrize(("query", "status", "message"), BAD_SEARCHES)
def test_bad_searches_get_a_clear_4xx(client, query, status, message):
    response = client.get("/api/search?" + query)
    assert response.status_code == status
    assert message in response.json()["detail"]


JSON = {"content-type": "application/json"}
BAD_ASKS = [
    (b"{not json", JSON, 400, "JSON"),
    (b"", JSON, 400, "JSON"),
    (b'{"question": "\xff\xfe"}', JSON, 400, "UTF-8"),
    (b'["a list"]', JSON, 422, "object"),
    (b"{}", JSON, 422, "question: Field required"),
    (b'{"question": "   "}', JSON, 422, "question"),
    (b'{"question": 42}', JSON, 422, "question"),
    (b'{"question": "x", "top_k": 1000}', JSON, 422, "top_k"),
    (b'{"question": "x", "top_k": "5"}', JSON, 422, "top_k"),
    (b'{"question": "x", "extra": 1}', JSON, 422, "extra"),
    (json.dumps({"question": "x" * 2001}).encode(), JSON, 422, "2000"),
    (json.dumps({"question": "x" * 1_000_000}).encode(), JSON, 413, "larger than"),
    (b"question=x", {"content-type": "application/x-www-form-urlencoded"}, 415, "json"),
]


@pytest.mark.parametrize(("body", "headers", "status", "message"), BAD_ASKS)
def test_bad_asks_get_a_clear_4xx(client, body, headers, status, message):
    response = client.post("/api/ask", content=body, headers=headers)
    assert response.status_code == status
    assert message in response.json()["detail"]


def _raw(url: str, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as is (no client normalises it); the status and the whole reply."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return int(reply.split(b" ", 2)[1]), reply


def test_a_one_megabyte_query_string_is_refused_with_a_reason(service_url):
    target = b"/api/search?q=" + b"x" * 1_000_000
    status, reply = _raw(
        service_url, b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert status == 414
    assert b"query string longer than 16384 bytes" in reply


def test_a_request_head_beyond_any_bound_is_refused_not_hung(service_url):
    target = b"/api/search?q=" + b"x" * 3_000_000
    request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    try:
        status, _ = _raw(service_url, request)  # a hang would time out after 10 s
    except ConnectionResetError:
        return  # refused while the request was still being sent
    assert status == 400


def test_a_body_announced_too_large_is_refused_before_it_is_sent(service_url):
    head = (
        b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 10000000\r\nConnection: close\r\n\r\n"
    )
    status, reply = _raw(service_url, head)  # the body never comes: a hang would time out
    assert status == 413
    assert b"larger than" in reply


def test_raw_non_utf8_in_the_query_string_is_refused(service_url):
    request = b"GET /api/search?q=\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    status, _ = _raw(service_url, request)
    assert status == 400


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (RemoteAPIError("Anthropic", "rate limited", status=429), 502),
        (AnswerError("the model returned nothing"), 502),
        (IndexCompatibilityError("built with another model"), 409),
        (MissingDependencyError("anthropic", "anthropic", "Claude answers"), 501),
    ],
)
def test_package_errors_map_to_statuses(example_index, error, status):
    def answer(index, question, top_k):
        raise error

    with TestClient(create_app(example_index, answer=answer), base_url=LOOPBACK) as client:
        response = client.post("/api/ask", json={"question": UVC})
    assert response.status_code == status
    assert response.json()["detail"] == str(error)


def test_an_unexpected_error_is_a_500_that_says_nothing_more(example_index):
    def answer(index, question, top_k):
        raise RuntimeError("/secret/path exploded")

    app = create_app(example_index, answer=answer)
    with TestClient(app, base_url=LOOPBACK, raise_server_exceptions=False) as client:
        response = client.post("/api/ask", json={"question": UVC})
    assert response.status_code == 500
    assert "/secret/path" not in response.text


def test_api_keys_never_leave_the_server(example_index, monkeypatch):
    keys = {
        "ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdef",
        "GEMINI_API_KEY": "AIza-test-0123456789abcdef",
    }
    for name, value in keys.items():
        monkeypatch.setenv(name, value)

    def answer(index, question, top_k):  # a careless backend echoing its key
        raise RemoteAPIError("Gemini", f"401 for key {keys['GEMINI_API_KEY']}", status=401)

    app = create_app(example_index, answer=answer)
    with TestClient(app, base_url=LOOPBACK) as client:
        hits = client.get("/api/search", params={"q": UVC}).json()
        responses = [
            client.get("/"),
            client.get("/static/app.js"),
            client.get("/static/app.css"),
            client.get("/api/health"),
            client.get("/api/search", params={"q": UVC}),
            client.get("/api/search"),
            client.post("/api/ask", json={"question": UVC}),
            client.get(hits[0]["frame_url"]),
            client.get("/nowhere"),
        ]
    for response in responses:
        seen = response.text if response.headers["content-type"].startswith(("text", "app")) else ""
        seen += json.dumps(dict(response.headers))
        for value in keys.values():
            assert value not in seen
    assert "API_KEY" not in responses[0].text + responses[1].text


def test_the_public_names_of_the_service_package():
    import llama_index_video.service as service

    assert set(service.__all__) == {
        "ERROR_STATUS",
        "Answerer",
        "InsecureBindError",
        "LiveIndex",
        "app_for_folder",
        "ask_with",
        "create_app",
        "serve",
    }
    assert all(getattr(service, name) is not None for name in service.__all__)


def test_serve_embeds_queries_on_one_thread(example_index, monkeypatch):
    import uvicorn

    from llama_index_video.service.server import serve

    served: dict[str, object] = {}

    def run(app, **_options):  # in place of binding a port: search and look at the model
        with TestClient(app, base_url=LOOPBACK) as test_client:  # its start-up loads the model
            served["hits"] = test_client.get("/api/search", params={"q": UVC})
        with app.state.live.reading() as (index, _catalog):
            served["threads"] = index.embed_model.threads
            served["options"] = index.embed_model._session.get_session_options()

    monkeypatch.setattr(uvicorn, "run", run)
    serve(example_index.path, llm="none")
    assert served["hits"].status_code == 200 and served["hits"].json()
    assert served["threads"] == 1
    assert served["options"].intra_op_num_threads == 1
