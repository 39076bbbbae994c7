"""The fake Gemini API, able to answer ``streamGenerateContent`` in several chunks.

:class:`~tests.fakes.gemini_server.FakeGeminiServer` streams each queued answer as
one server-sent event; a test of streaming needs the answer split the way the real
API splits it: text in several ``data:`` events, the finish reason and the usage
totals on the last one. Everything else (faults, recording, the Files API) is the
fake's own.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from tests.fakes.gemini_server import FakeGeminiServer, RecordedRequest


def chunk(text: str) -> dict[str, Any]:
    """A stream chunk carrying ``text`` and nothing else."""
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}


def final_chunk(
    text: str = "", *, finish: str = "STOP", prompt: int = 40, output: int = 7, thoughts: int = 0
) -> dict[str, Any]:
    """The last chunk of a stream: some text (maybe none), finish reason, usage totals."""
    candidate: dict[str, Any] = {"finishReason": finish}
    if text:
        candidate["content"] = {"role": "model", "parts": [{"text": text}]}
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": prompt + output + thoughts,
    }
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake"}


class StreamingGeminiServer(FakeGeminiServer):
    """The fake Gemini API; :meth:`queue_stream` scripts a multi-event stream."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._streams: deque[list[dict[str, Any]]] = deque()
        handler = self._server.httpd.RequestHandlerClass
        server = self

        class StreamingHandler(handler):
            def _generate(self, request: RecordedRequest) -> None:
                events = server._next_stream() if "stream" in request.path else None
                if events is None:
                    super()._generate(request)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()

        self._server.httpd.RequestHandlerClass = StreamingHandler

    def queue_stream(self, *texts: str, **final: Any) -> None:
        """Stream the next answer as one event per text, then :func:`final_chunk` (``final``)."""
        with self._lock:
            self._streams.append([chunk(text) for text in texts] + [final_chunk(**final)])

    def _next_stream(self) -> list[dict[str, Any]] | None:
        with self._lock:
            return self._streams.popleft() if self._streams else None
