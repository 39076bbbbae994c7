"""The Gemini fake's wire: its routes, its request handler and the API's error bodies.

The handler turns each HTTP request into a :class:`RecordedRequest`, lets the
:class:`~tests.fakes.gemini_server.FakeGeminiServer` record it (and play a scripted
fault), routes it to the server's state (embeddings, files, batches, scripted
answers) and writes the answer, or the API's error body ``{"error": {"code",
"message", "status"}}`` for an :class:`ApiError`.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.loopback import echoed

if TYPE_CHECKING:
    from tests.fakes.gemini_server import FakeGeminiServer

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
ENDPOINTS = (
    "embed",
    "upload",
    "file_get",
    "file_delete",
    "batch_create",
    "batch_get",
    "batch_cancel",
    "generate",
)
_ROUTES = [
    ("embed", "POST", re.compile(r"^/v1(beta)?/models/[^/:]+:batchEmbedContents$")),
    ("batch_create", "POST", re.compile(r"^/v1(beta)?/models/[^/:]+:asyncBatchEmbedContent$")),
    ("generate", "POST", re.compile(r"^/v1(beta)?/models/[^/:]+:(stream)?[gG]enerateContent$")),
    ("upload", "POST", re.compile(r"^/upload/v1(beta)?/files$")),
    ("file_get", "GET", re.compile(r"^/v1(beta)?/files/[^/:]+$")),
    ("file_delete", "DELETE", re.compile(r"^/v1(beta)?/files/[^/:]+$")),
    ("batch_get", "GET", re.compile(r"^/v1(beta)?/batches/[^/:]+$")),
    ("batch_cancel", "POST", re.compile(r"^/v1(beta)?/batches/[^/:]+:cancel$")),
]


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    endpoint: str
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON (``None`` for an empty or binary body)."""
        try:
            return json.loads(self.body) if self.body else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None


class ApiError(Exception):
    """An error the API answers: its HTTP status, message and details."""

    def __init__(
        self, code: int, message: str, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


KEY_INVALID = [
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "APIKEY_INVALID",
        "domain": "googleapis.com",
    }
]


def handler_for(server: FakeGeminiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

        def _handle(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            request = RecordedRequest(
                endpoint=endpoint_of(method, parts.path),
                method=method,
                path=parts.path,
                query=parse_qs(parts.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            fault = server._record(request)
            self._handling = True
            try:
                if fault is not None and fault.delay and server._server.closing.wait(fault.delay):
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client left
                    try:
                        if fault is not None and fault.status is not None:
                            raise ApiError(fault.status, fault.message or f"fake {fault.status}")
                        self._route(request)
                    except ApiError as exc:
                        # A failed upload session is over: say so, or the SDK re-sends the chunk.
                        final = (
                            {"x-goog-upload-status": "final"}
                            if request.endpoint == "upload"
                            else {}
                        )
                        echo = echoed(request.headers) if server.echo_headers else None
                        self._reply(exc.code, error_body(exc, echo), final)
            finally:
                self._finished()

        def _finished(self) -> None:
            # Before the last bytes go out: a client that has read its answer may send
            # the next request before this thread returns, which is not two at once.
            if self._handling:
                self._handling = False
                server._done()

        def _route(self, request: RecordedRequest) -> None:
            if request.endpoint == "unknown":
                raise ApiError(404, f"no route for {request.method} {request.path}")
            upload_session = request.query.get("upload_id", [None])[0]
            if upload_session is None and request.headers.get("x-goog-api-key") != server.api_key:
                raise ApiError(400, "API key not valid. Please pass a valid API key.", KEY_INVALID)
            body = request.json or {}
            resource = request.path.split("/", 2)[-1].split(":", 1)[0]  # models/m, files/f...
            model = resource
            if request.endpoint == "embed":
                self._embed(body, model)
            elif request.endpoint == "upload":
                self._upload(request, body, upload_session)
            elif request.endpoint in ("file_get", "file_delete"):
                self._file(request.endpoint, resource)
            elif request.endpoint == "batch_create":
                self._reply(200, server._create_batch(body, model))
            elif request.endpoint == "batch_get":
                job = server._poll_batch(resource)
                if job is None:
                    raise ApiError(404, f"{resource} not found")
                self._reply(200, job)
            elif request.endpoint == "batch_cancel":
                if not server._cancel_batch(resource):
                    raise ApiError(404, f"{resource} not found")
                self._reply(200, {})
            else:
                self._generate(request)

        def _embed(self, body: dict[str, Any], model: str) -> None:
            embeddings, total, by_modality = [], 0, {}
            for request in body.get("requests") or []:
                values, tokens, modalities = server._embed_one(request, model)
                embeddings.append({"values": values})
                total += tokens
                for name, count in modalities.items():
                    by_modality[name] = by_modality.get(name, 0) + count
            details = [{"modality": m, "tokenCount": c} for m, c in by_modality.items()]
            usage = {"promptTokenCount": total, "totalTokenCount": total}
            self._reply(
                200,
                {
                    "embeddings": embeddings,
                    "usageMetadata": usage | {"promptTokensDetails": details},
                },
            )

        def _upload(
            self, request: RecordedRequest, body: dict[str, Any], session: str | None
        ) -> None:
            command = request.headers.get("x-goog-upload-command", "")
            if session is None:
                if "start" not in command:
                    raise ApiError(400, "resumable upload must start with command 'start'")
                upload_id = server._start_upload(body)
                url = f"{server.base_url}/upload/v1/files?upload_id={upload_id}"
                self._reply(200, {}, {"x-goog-upload-url": url, "x-goog-upload-status": "active"})
                return
            stored = server._append_upload(session, request.body, "finalize" in command)
            if stored is None:
                self._reply(200, {}, {"x-goog-upload-status": "active"})
            else:
                resource = stored.resource(server.base_url)
                self._reply(200, {"file": resource}, {"x-goog-upload-status": "final"})

        def _file(self, endpoint: str, name: str) -> None:
            stored = server._poll_file(name) if endpoint == "file_get" else server.files.get(name)
            if stored is None or stored.deleted:
                raise ApiError(403, f"You do not have permission to access the File {name}")
            if endpoint == "file_delete":
                stored.deleted = True
                self._reply(200, {})
            else:
                self._reply(200, stored.resource(server.base_url))

        def _generate(self, request: RecordedRequest) -> None:
            answer = server._next_generate()
            if "stream" not in request.path:
                self._reply(200, answer)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self._finished()
            self.wfile.write(f"data: {json.dumps(answer)}\n\n".encode())

        def _reply(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"content-type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self._finished()
            self.wfile.write(data)

    return Handler


def endpoint_of(method: str, path: str) -> str:
    return next(
        (name for name, verb, rx in _ROUTES if verb == method and rx.match(path)), "unknown"
    )


def error_body(error: ApiError, echo: str | None = None) -> dict[str, Any]:
    message = error.message if echo is None else f"{error.message}; you sent {echo}"
    body = {"code": error.code, "message": message, "status": STATUS_NAMES.get(error.code)}
    if error.details:
        body["details"] = error.details
    return {"error": body}
