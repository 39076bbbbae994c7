"""A local fake of Anthropic's Messages API, driven by the real ``anthropic`` SDK.

Speaks the wire protocol on 127.0.0.1: ``POST /v1/messages`` answers JSON, or
server-sent events when the body says ``"stream": true`` (``message_start``,
``content_block_start``, ``ping``, ``content_block_delta`` text deltas,
``content_block_stop``, ``message_delta``, ``message_stop``). Replies are scripted
in a queue; when it is empty ``default`` answers. Errors use the API's body
``{"type": "error", "error": {"type": ..., "message": ...}}`` and optional
``retry-after`` (with ``echo_headers``, the message quotes the request's headers, key
included, as a careless proxy might); a reply can also wait before answering (to
trip the SDK's timeout) or fail in the middle of a stream. A reply can also call
tools: ``tool_use`` content blocks (streamed as ``input_json_delta`` pieces) with
``stop_reason: "tool_use"``. Instead of a queue, ``respond(body)`` can choose each
reply from the request (the conversation so far, with the ``tool_result`` blocks the
client sent back), standing in for a model that reads a tool's result before its next
call. Every request is recorded with its headers and JSON body, and requests without
the expected key get the API's 401.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.loopback import LoopbackHTTP, echoed

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class ToolUse:
    """One ``tool_use`` block of a reply."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the fake server.

    ``chunks`` are the text deltas of a streamed answer (joined for a JSON one);
    ``tool_uses`` follow the text as ``tool_use`` blocks; ``status`` >= 400 makes it
    an error reply of ``error_type``; ``delay`` seconds pass before the status line is
    sent; ``stream_error`` ends a stream with an ``error`` event after the first chunk;
    ``chunk_delay`` seconds pass before each streamed chunk after the first.
    """

    chunks: tuple[str, ...] = ("The answer.",)
    status: int = 200
    error_type: str | None = None
    message: str = ""
    retry_after: float | None = None
    delay: float = 0.0
    stream_error: str | None = None
    chunk_delay: float = 0.0
    input_tokens: int = 42
    output_tokens: int = 7
    tool_uses: tuple[ToolUse, ...] = ()


def text_reply(*chunks: str, **options: Any) -> Reply:
    """A successful answer made of ``chunks`` (one delta each when streamed)."""
    return Reply(chunks=chunks, **options)


def tool_reply(name: str, *, text: str = "", **arguments: Any) -> Reply:
    """A reply calling the tool ``name`` with ``arguments`` (after ``text``, if any)."""
    return Reply(chunks=(text,) if text else (), tool_uses=(ToolUse(name, arguments),))


Responder = Callable[[dict[str, Any]], Reply]


def error_reply(status: int, *, retry_after: float | None = None, message: str = "") -> Reply:
    """An API error: 429 ``rate_limit_error``, 500 ``api_error``, 529 ``overloaded_error``..."""
    return Reply(
        status=status,
        error_type=ERROR_TYPES.get(status, "api_error"),
        message=message or f"fake {status}",
        retry_after=retry_after,
    )


def slow_reply(delay: float) -> Reply:
    """A successful answer sent only after ``delay`` seconds."""
    return Reply(delay=delay)


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeAnthropicServer:
    """The fake API on a free port of 127.0.0.1; use as a context manager."""

    api_key: str = "sk-ant-fake-test-key"
    model: str = "claude-sonnet-4-6"
    default: Reply = field(default_factory=Reply)
    echo_headers: bool = False
    respond: Responder | None = None
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = LoopbackHTTP(_make_handler(self))

    @property
    def url(self) -> str:
        """Base URL for the SDK's ``base_url``."""
        return self._server.url

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._queue.extend(replies)

    def messages_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.path.startswith("/v1/messages")]

    def __enter__(self) -> FakeAnthropicServer:
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        return self.respond(request.body) if self.respond is not None else self.default

    def _authorised(self, headers: dict[str, str]) -> bool:
        return self.api_key in (headers.get("x-api-key"), _bearer(headers.get("authorization")))


def _bearer(value: str | None) -> str | None:
    return value[len("Bearer ") :] if value and value.startswith("Bearer ") else None


def _tool_use_block(number: int, use: ToolUse, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_fake_{number}", "name": use.name, "input": arguments}


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_uses else "end_turn"


def _message(server: FakeAnthropicServer, reply: Reply, text: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [_tool_use_block(n, use, use.arguments) for n, use in enumerate(reply.tool_uses)]
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": server.model,
        "content": content,
        "stop_reason": _stop_reason(reply) if content else None,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def _tool_use_events(reply: Reply, first_index: int) -> list[tuple[str, dict[str, Any]]]:
    """Each tool call as the API streams it: the block, its JSON input in two pieces."""
    events: list[tuple[str, dict[str, Any]]] = []
    for number, use in enumerate(reply.tool_uses):
        index = first_index + number
        block = _tool_use_block(number, use, {})
        arguments = json.dumps(use.arguments)
        half = len(arguments) // 2
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        for piece in (arguments[:half], arguments[half:]):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _sse_events(server: FakeAnthropicServer, reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    start = {**_message(server, reply, ""), "content": [], "stop_reason": None}
    start["usage"]["output_tokens"] = 1
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    if reply.chunks:
        text_start = {"type": "text", "text": ""}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": text_start},
            )
        )
    for chunk in reply.chunks:
        delta = {"type": "text_delta", "text": chunk}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
        if reply.stream_error:
            error = {"type": reply.stream_error, "message": "fake failure mid-stream"}
            return [*events, ("error", {"type": "error", "error": error})]
    if reply.chunks:
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events += _tool_use_events(reply, first_index=1 if reply.chunks else 0)
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _make_handler(server: FakeAnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = RecordedRequest("POST", self.path, headers, json.loads(raw or b"{}"))
            reply = server._next_reply(request)
            if reply.delay and server._server.closing.wait(reply.delay):
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
                self._answer(request, reply)

        def _answer(self, request: RecordedRequest, reply: Reply) -> None:
            if not self.path.startswith("/v1/messages"):
                self._error(404, "not_found_error", f"no route {self.path}")
            elif not server._authorised(request.headers):
                self._error(401, "authentication_error", "invalid x-api-key")
            elif reply.status >= 400:
                message = reply.message
                if server.echo_headers:
                    message = f"{message}; you sent {echoed(request.headers)}"
                self._error(reply.status, reply.error_type or "api_error", message, reply)
            elif request.body.get("stream"):
                self._stream(reply)
            else:
                self._json(200, _message(server, reply, "".join(reply.chunks)))

        def _json(
            self, status: int, body: dict[str, Any], extra: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_fake")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, kind: str, message: str, reply: Reply | None = None) -> None:
            extra = {}
            if reply is not None and reply.retry_after is not None:
                extra["retry-after"] = f"{reply.retry_after:g}"
            body = {"type": "error", "error": {"type": kind, "message": message}}
            self._json(status, body, extra)

        def _stream(self, reply: Reply) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("request-id", "req_fake")
            self.end_headers()
            written = 0
            for name, data in _sse_events(server, reply):
                later = name == "content_block_delta" and written
                if later and reply.chunk_delay and server._server.closing.wait(reply.chunk_delay):
                    return
                written += name == "content_block_delta"
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

    return Handler
