"""A :class:`VideoAnswerer` as a LlamaIndex query engine (``VideoIndex.as_query_engine()``).

LlamaIndex apps hold query engines: ``engine.query(...)``, ``await engine.aquery(...)``,
tools built with ``QueryEngineTool``, routers. :class:`VideoQueryEngine` is the
package's answer behind that interface: the same moments, frames and prompt as
``VideoIndex.ask``, and the same citation check, so what a ``Response`` cites is always
a moment that was retrieved. The checked :class:`~llama_index_video.results.Answer`
is in ``response.metadata["answer"]``, its citations (as dicts) in
``response.metadata["citations"]``, the moments (``MomentNode``s with their frames)
in ``response.source_nodes``. With ``streaming=True`` a query returns a
``StreamingResponse`` whose metadata is filled when its text has been read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Generator
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks import CallbackManager
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.schema import QueryBundle

from llama_index_video.answering.answerer import (
    AnswerStream,
    AsyncAnswerStream,
    Prompt,
    VideoAnswerer,
)
from llama_index_video.results import Answer


def answer_metadata(answer: Answer) -> dict[str, Any]:
    """What a ``Response`` carries of a checked answer."""
    return {
        "answer": answer,
        "found": answer.found,
        "citations": [citation.to_dict() for citation in answer.citations],
        "unverified": list(answer.unverified),
    }


class VideoQueryEngine(BaseQueryEngine):
    """Answers queries with cited moments, as ``VideoIndex.ask`` does.

    Args:
        answerer: The answerer over an index (``VideoIndex.answerer(...)``).
        streaming: Return ``StreamingResponse``s (text as the model writes it).
        callback_manager: LlamaIndex callbacks; none by default.
    """

    def __init__(
        self,
        answerer: VideoAnswerer,
        *,
        streaming: bool = False,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        self.answerer = answerer
        self.streaming = streaming
        super().__init__(callback_manager=callback_manager or CallbackManager([]))

    def _get_prompt_modules(self) -> PromptMixinType:
        return {}

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        stream = self._prompt(query_bundle.query_str).stream(streaming=self.streaming)
        if not self.streaming:
            for _ in stream:
                pass
            return _response(stream)
        metadata: dict[str, Any] = {}
        return StreamingResponse(
            _filled(stream, metadata), source_nodes=stream.nodes, metadata=metadata
        )

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        prompt = await asyncio.to_thread(self._prompt, query_bundle.query_str)
        stream = await prompt.astream(streaming=self.streaming)
        if not self.streaming:
            async for _ in stream:
                pass
            return _response(stream)
        metadata: dict[str, Any] = {}
        return AsyncStreamingResponse(
            _afilled(stream, metadata), source_nodes=stream.nodes, metadata=metadata
        )

    def _prompt(self, question: str) -> Prompt:
        """What the model is asked (:meth:`VideoAnswerer.prompt`; ``aquery`` makes it in a
        worker thread, so the event loop is never blocked by the retrieval)."""
        return self.answerer.prompt(question)


def _response(stream: AnswerStream) -> Response:
    """The response of a stream read to its end."""
    answer = stream.answer
    return Response(answer.text, source_nodes=stream.nodes, metadata=answer_metadata(answer))


def _filled(stream: AnswerStream, metadata: dict[str, Any]) -> Generator[str, None, None]:
    """The stream's deltas; then ``metadata`` gets the checked answer."""
    yield from stream
    metadata.update(answer_metadata(stream.answer))


async def _afilled(
    stream: AsyncAnswerStream, metadata: dict[str, Any]
) -> AsyncGenerator[str, None]:
    """Async :func:`_filled`."""
    async for delta in stream:
        yield delta
    metadata.update(answer_metadata(stream.answer))
