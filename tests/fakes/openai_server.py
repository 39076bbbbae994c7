"""A local stand-in for OpenAI's Chat Completions API, driven by the real ``openai`` SDK.

Speaks the wire protocol on 127.0.0.1: ``POST /v1/chat/completions`` answers a
``chat.completion`` object, or server-sent ``chat.completion.chunk`` events ending in
``data: [DONE]`` when the body says ``"stream": true``. A reply is either text or
function tool calls (``tool_calls`` with ``function.name`` and JSON ``arguments``,
streamed as the API streams them: the call's id and name first, then the arguments
in pieces, then ``finish_reason: "tool_calls"``).

What to reply is decided by ``respond(body)``, a function of the request's JSON (the
messages so far, with the tool results the client sent back), so a test can stand in
for a model that reads a tool's result before choosing its next call. Every request
is recorded, and one without the expected key gets the API's 401 error body.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.loopback import LoopbackHTTP


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatReply:
    """Text, or tool calls (then ``text`` is usually empty)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


def tool_reply(name: str, **arguments: Any) -> ChatReply:
    return ChatReply(tool_calls=(ToolCall(name, arguments),))


Responder = Callable[[dict[str, Any]], ChatReply]


@dataclass
class FakeOpenAIServer:
    """The stand-in on a free port of 127.0.0.1; use as a context manager."""

    respond: Responder
    api_key: str = "sk-fake-openai-test-key"
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = LoopbackHTTP(_make_handler(self))

    @property
    def url(self) -> str:
        """The SDK's ``base_url`` (``api_base`` in LlamaIndex)."""
        return self._server.url + "/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    def _reply(self, body: dict[str, Any]) -> ChatReply:
        with self._lock:
            self.requests.append(body)
        return self.respond(body)


def _calls(reply: ChatReply, offset: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{offset}_{number}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for number, call in enumerate(reply.tool_calls)
    ]


def _completion(body: dict[str, Any], reply: ChatReply, offset: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _calls(reply, offset)
    return {
        "id": f"chatcmpl-{offset}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "gpt-4o"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def _chunks(body: dict[str, Any], reply: ChatReply, offset: int) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{offset}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": body.get("model", "gpt-4o"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    words = reply.text.split(" ")
    chunks += [chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words) if w]
    for index, call in enumerate(_calls(reply, offset)):
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": call["function"]["name"], "arguments": ""}
        chunks.append(chunk({"tool_calls": [head]}))
        arguments = call["function"]["arguments"]
        middle = len(arguments) // 2
        for piece in (arguments[:middle], arguments[middle:]):
            chunks.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    return chunks


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                if self.path != "/v1/chat/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                elif self.headers.get("authorization") != f"Bearer {server.api_key}":
                    error = {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                    }
                    self._json(401, {"error": {**error, "code": "invalid_api_key"}})
                else:
                    self._answer(body)

        def _answer(self, body: dict[str, Any]) -> None:
            reply = server._reply(body)
            offset = len(server.requests)
            if not body.get("stream"):
                self._json(200, _completion(body, reply, offset))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for event in _chunks(body, reply, offset):
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
