"""A local fake of the Gemini REST API, driven by the real ``google-genai`` SDK.

Speaks the Gemini Developer API wire protocol on 127.0.0.1, under the API version
the SDK uses (``/v1`` for google-genai 3.x, ``/v1beta`` for 2.x; both routes work):

- ``POST /{v}/models/{m}:batchEmbedContents``: one deterministic pseudo-embedding
  per request (a hash-seeded Gaussian vector, deliberately not unit length) at
  the asked ``outputDimensionality`` (or ``answer_dimension``, to play a model that
  ignores it), plus ``usageMetadata`` token counts. It
  rejects, like the real API, a request whose ``model`` differs from the URL's, a
  dimension outside 128-3072, inline images whose bytes are not PNG/JPEG, and
  ``file_data`` naming a file that is unknown, deleted or not ``ACTIVE``.
- The resumable Files API: ``POST /upload/{v}/files`` (``X-Goog-Upload-Command:
  start``, then ``upload`` / ``upload, finalize`` chunks to the returned
  ``x-goog-upload-url``), ``GET`` and ``DELETE /{v}/files/{id}``. A new file is
  ``PROCESSING`` for ``processing_polls`` GETs, then ``file_final_state``
  (``ACTIVE``, ``FAILED``, or ``PROCESSING`` to stay stuck).
- The Batch API for embeddings: ``POST /{v}/models/{m}:asyncBatchEmbedContent``,
  ``GET /{v}/batches/{id}`` (``RUNNING`` for ``batch_running_polls`` GETs, then
  ``batch_final_state`` with inlined answers; items listed in
  ``batch_failing_items`` answer an error), ``POST /{v}/batches/{id}:cancel``.
- ``POST /{v}/models/{m}:generateContent`` and ``:streamGenerateContent?alt=sse``,
  answered from a queue of scripted responses (:meth:`FakeGeminiServer.queue_generate`).

Faults are scripted per endpoint (:meth:`FakeGeminiServer.fail`): an HTTP error
with the API's body ``{"error": {"code", "message", "status"}}`` and/or a delay
before answering (to trip the SDK's timeout); with ``echo_headers`` an error's message
quotes the request's headers, API key included, as a careless proxy might. Every
request is recorded (method, path, query, lower-cased headers, raw body and parsed
JSON); a request without the expected ``x-goog-api-key`` gets the API's 400
``API_KEY_INVALID``. ``max_in_flight`` is the most requests the server was handling
at once. The wire (routes, request handler, error bodies) is :mod:`tests.fakes.gemini_http`;
this module holds the server's state and what it answers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.fakes.gemini_http import ENDPOINTS, ApiError, RecordedRequest, handler_for
from tests.fakes.loopback import LoopbackHTTP

TOKENS_PER_MEDIA = {"image": 258, "video": 300, "audio": 100, "application": 258}


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour: wait ``delay`` seconds, then answer ``status`` (if set)."""

    status: int | None = None
    delay: float = 0.0
    message: str = ""


@dataclass
class StoredFile:
    """An uploaded file as the Files API holds it."""

    name: str
    mime_type: str
    display_name: str
    data: bytes
    state: str
    polls_left: int
    final_state: str
    deleted: bool = False

    def resource(self, base_url: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "displayName": self.display_name,
            "mimeType": self.mime_type,
            "sizeBytes": str(len(self.data)),
            "uri": f"{base_url}/v1/{self.name}",
            "state": self.state,
            "source": "UPLOADED",
        }
        if self.state == "FAILED":
            body["error"] = {"code": 3, "message": "the file could not be processed"}
        return body


@dataclass
class FakeGeminiServer:
    """The fake API on a free port of 127.0.0.1; use as a context manager."""

    api_key: str = "fake-gemini-key"
    processing_polls: int = 0
    file_final_state: str = "ACTIVE"
    batch_running_polls: int = 1
    batch_final_state: str = "BATCH_STATE_SUCCEEDED"
    batch_failing_items: frozenset[int] = frozenset()
    answer_dimension: int | None = None
    echo_headers: bool = False
    requests: list[RecordedRequest] = field(default_factory=list)
    files: dict[str, StoredFile] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, deque[Fault]] = {name: deque() for name in ENDPOINTS}
        self._generate: deque[dict[str, Any]] = deque()
        self._uploads: dict[str, dict[str, Any]] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._ids = iter(range(1, 1 << 30))
        self._in_flight = 0
        self.max_in_flight = 0
        self._server = LoopbackHTTP(handler_for(self))

    @property
    def base_url(self) -> str:
        """Base URL for ``HttpOptions(base_url=...)``."""
        return self._server.url

    def __enter__(self) -> FakeGeminiServer:
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    # -- scripting ----------------------------------------------------------------------

    def fail(self, endpoint: str, *faults: Fault | int) -> None:
        """Answer the next requests to ``endpoint`` with ``faults`` (an int is a status)."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}; one of {ENDPOINTS}")
        with self._lock:
            self._faults[endpoint].extend(
                Fault(status=f) if isinstance(f, int) else f for f in faults
            )

    def queue_generate(self, *responses: dict[str, Any] | str) -> None:
        """Answer the next generateContent calls with these bodies (a str is a text answer)."""
        with self._lock:
            self._generate.extend(text_response(r) if isinstance(r, str) else r for r in responses)

    # -- inspection ----------------------------------------------------------------------

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The recorded requests to ``endpoint`` (see :data:`ENDPOINTS`)."""
        with self._lock:
            return [r for r in self.requests if r.endpoint == endpoint]

    def embedded_contents(self) -> list[dict[str, Any]]:
        """Every content sent to batchEmbedContents, in order (one per vector)."""
        return [
            request["content"]
            for call in self.requests_to("embed")
            for request in (call.json or {}).get("requests", [])
        ]

    def live_files(self) -> list[StoredFile]:
        """Uploaded files not deleted yet."""
        with self._lock:
            return [f for f in self.files.values() if not f.deleted]

    # -- behaviour (called from handler threads) --------------------------------------------

    def _record(self, request: RecordedRequest) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            queue = self._faults.get(request.endpoint)
            return queue.popleft() if queue else None

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _embed_one(self, request: dict[str, Any], model: str) -> tuple[list[float], int, dict]:
        """A vector for one EmbedContentRequest, or raise ``ApiError`` like the API."""
        if request.get("model", model) != model:
            raise ApiError(400, f"model {request.get('model')} does not match {model}")
        dimension = int(request.get("outputDimensionality") or 3072)
        if not 128 <= dimension <= 3072:
            raise ApiError(400, f"output_dimensionality must be 128..3072, not {dimension}")
        dimension = self.answer_dimension or dimension
        parts = (request.get("content") or {}).get("parts") or []
        if not parts:
            raise ApiError(400, "content must have at least one part")
        tokens: dict[str, int] = {}
        for part in parts:
            modality, count = self._check_part(part)
            tokens[modality] = tokens.get(modality, 0) + count
        return pseudo_embedding(parts, dimension), sum(tokens.values()), tokens

    def _check_part(self, part: dict[str, Any]) -> tuple[str, int]:
        if "text" in part:
            return "TEXT", max(1, len(part["text"]) // 4)
        inline = _field(part, "inline_data", "inlineData")
        if inline is not None:
            mime = _field(inline, "mime_type", "mimeType") or ""
            data = _b64decode(inline.get("data", ""))
            if mime.startswith("image/") and not data.startswith((b"\xff\xd8\xff", b"\x89PNG")):
                raise ApiError(400, "Unable to process input image. Please retry.")
            return _media_tokens(mime)
        file_data = _field(part, "file_data", "fileData")
        if file_data is None:
            raise ApiError(400, f"unsupported part {sorted(part)}")
        uri = _field(file_data, "file_uri", "fileUri") or ""
        name = "files/" + uri.rsplit("/files/", 1)[-1]
        with self._lock:
            stored = self.files.get(name)
        if stored is None or stored.deleted:
            raise ApiError(403, f"You do not have permission to access the File {name}")
        if stored.state != "ACTIVE":
            raise ApiError(400, f"The File {name} is not in an ACTIVE state.")
        return _media_tokens(_field(file_data, "mime_type", "mimeType") or stored.mime_type)

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids):06d}"

    def _start_upload(self, body: dict[str, Any]) -> str:
        meta = body.get("file") or {}
        upload_id = self._new_id("upload-")
        with self._lock:
            self._uploads[upload_id] = {
                "mime": _field(meta, "mime_type", "mimeType") or "application/octet-stream",
                "display": _field(meta, "display_name", "displayName") or "",
                "data": b"",
            }
        return upload_id

    def _append_upload(self, upload_id: str, chunk: bytes, finalize: bool) -> StoredFile | None:
        with self._lock:
            session = self._uploads[upload_id]
            session["data"] += chunk
            if not finalize:
                return None
            del self._uploads[upload_id]
        name = self._new_id("files/file-")
        polls = self.processing_polls
        stays = self.file_final_state == "PROCESSING"
        stored = StoredFile(
            name=name,
            mime_type=session["mime"],
            display_name=session["display"],
            data=session["data"],
            state="PROCESSING" if polls > 0 or stays else self.file_final_state,
            polls_left=polls,
            final_state=self.file_final_state,
        )
        with self._lock:
            self.files[name] = stored
        return stored

    def _poll_file(self, name: str) -> StoredFile | None:
        with self._lock:
            stored = self.files.get(name)
            if stored is None or stored.deleted:
                return None
            if stored.state == "PROCESSING" and stored.final_state != "PROCESSING":
                stored.polls_left -= 1
                if stored.polls_left <= 0:
                    stored.state = stored.final_state
            return stored

    def _create_batch(self, body: dict[str, Any], model: str) -> dict[str, Any]:
        batch = body.get("batch") or {}
        requests = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
        name = self._new_id("batches/batch-")
        job = {
            "name": name,
            "model": model,
            "displayName": batch.get("displayName", ""),
            "requests": [r.get("request") or {} for r in requests],
            "state": "BATCH_STATE_PENDING",
            "polls_left": self.batch_running_polls,
        }
        with self._lock:
            self._batches[name] = job
        return self._batch_resource(job)

    def _poll_batch(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            job = self._batches.get(name)
            if job is None:
                return None
            if job["state"] in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
                job["polls_left"] -= 1
                job["state"] = (
                    "BATCH_STATE_RUNNING" if job["polls_left"] > 0 else self.batch_final_state
                )
        return self._batch_resource(job)

    def _cancel_batch(self, name: str) -> bool:
        with self._lock:
            job = self._batches.get(name)
            if job is not None:
                job["state"] = "BATCH_STATE_CANCELLED"
            return job is not None

    def _batch_resource(self, job: dict[str, Any]) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.EmbedContentBatch",
            "name": job["name"],
            "model": job["model"],
            "displayName": job["displayName"],
            "state": job["state"],
        }
        done = job["state"] not in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING")
        if job["state"] == "BATCH_STATE_SUCCEEDED":
            answers = [
                self._batch_answer(index, request, job["model"])
                for index, request in enumerate(job["requests"])
            ]
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": answers}}
        return {"name": job["name"], "metadata": metadata, "done": done}

    def _batch_answer(self, index: int, request: dict[str, Any], model: str) -> dict[str, Any]:
        if index in self.batch_failing_items:
            return {"error": {"code": 3, "message": f"request {index} was invalid"}}
        try:
            values, tokens, _ = self._embed_one(request, model)
        except ApiError as exc:
            return {"error": {"code": 3, "message": exc.message}}
        return {"response": {"embedding": {"values": values}, "tokenCount": str(tokens)}}

    def _next_generate(self) -> dict[str, Any]:
        with self._lock:
            return self._generate.popleft() if self._generate else text_response("ok")


def pseudo_embedding(parts: Iterable[dict[str, Any]], dimension: int) -> list[float]:
    """The fake's vector for a content: seeded by its parts, Gaussian, length ~3*sqrt(dim)."""
    canonical = json.dumps(
        [_canonical_part(part) for part in parts], sort_keys=True, separators=(",", ":")
    )
    seed = int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:8], "big")
    return (np.random.default_rng(seed).normal(size=dimension) * 3.0).round(6).tolist()


def text_response(text: str) -> dict[str, Any]:
    """A generateContent answer carrying ``text``."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": "fake",
    }


def _field(mapping: dict[str, Any], snake: str, camel: str) -> Any:
    return mapping.get(snake, mapping.get(camel))


def _b64decode(data: str) -> bytes:
    return base64.b64decode(data.replace("-", "+").replace("_", "/") + "==")


def _canonical_part(part: dict[str, Any]) -> dict[str, Any]:
    if "text" in part:
        return {"text": part["text"]}
    inline = _field(part, "inline_data", "inlineData")
    if inline is not None:
        digest = hashlib.sha256(_b64decode(inline.get("data", ""))).hexdigest()
        return {"inline": digest, "mime": _field(inline, "mime_type", "mimeType")}
    file_data = _field(part, "file_data", "fileData") or {}
    return {"file": _field(file_data, "file_uri", "fileUri")}


def _media_tokens(mime: str) -> tuple[str, int]:
    major = mime.split("/", 1)[0]
    modality = "DOCUMENT" if major == "application" else major.upper()
    return modality, TOKENS_PER_MEDIA.get(major, 100)
