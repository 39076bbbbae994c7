"""Gemini as a LlamaIndex multimodal chat LLM that can watch the retrieved clip itself.

The google-genai SDK is called directly (``models.generate_content`` and
``generate_content_stream``, sync and under ``client.aio``). Messages become Gemini
contents in :mod:`.gemini_messages`: text, frames as inline JPEGs (shrunk to
``max_image_edge``, 1536 px by default: two of the 768 px tiles Gemini bills images
in), and video or audio blocks, so a clip-level question is answered from the clip
itself (a retrieved :class:`~llama_index_video.media.clips.Clip` is
``VideoBlock(path=clip.path, video_mimetype=clip.mimetype)``). Media goes inline while
the request's media stays within ``max_inline_bytes``; larger files go through the
Files API: uploaded, polled until ``ACTIVE``, and deleted after the answer, also when
the call fails or a stream is abandoned.

Network traffic goes through the private :mod:`llama_index_video._gemini` layer: the SDK
retries 408/429/5xx answers, connection failures and (sync) timeouts with backoff;
the transport adds what the SDK leaves out (async timeouts, whole uploads); all
bounded by ``max_retries``. A stream is retried only before its first chunk, by the
SDK alone, so an async stream is not retried on a timeout. What still fails becomes
a one-line :class:`~llama_index_video.errors.RemoteAPIError`.

An answer Gemini withholds (a blocked prompt, a candidate stopped for safety or
recitation) is not an error: the response carries the text received so far (usually
none), ``raw["blocked"]`` names the reason, and a warning is logged.

The API key is held privately as a ``SecretStr``: never in ``repr``, ``model_dump``,
``to_json``, logs or error messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.callbacks import llm_chat_callback

from llama_index_video._gemini import transport
from llama_index_video._gemini.client import API_KEY_ENV, RetrySettings, make_client
from llama_index_video.answering.chat_llm import (
    MultimodalChatLLM,
    delta_response,
    final_response,
)
from llama_index_video.answering.gemini_messages import (
    MessageConverter,
    PendingUpload,
    Reply,
    Turn,
)
from llama_index_video.errors import AnswerError, RemoteAPIError

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

logger = logging.getLogger(__name__)

DEFAULT_GEMINI_MODEL: Final = "gemini-2.5-flash"


@dataclass(frozen=True)
class _Request:
    """One call's contents (uploads still pending) and generation settings."""

    turns: list[Turn]
    config: types.GenerateContentConfig


class GeminiMultimodalLLM(MultimodalChatLLM, RetrySettings):
    """Gemini through ``generateContent``, taking LlamaIndex text, image, video and audio blocks.

    Works wherever LlamaIndex wants a chat LLM, including
    ``RetrieverQueryEngine.from_args(retriever, llm=..., multimodal=True)``. Token
    usage of each call is in ``ChatResponse.raw["usage"]`` (which LlamaIndex's
    ``TokenCountingHandler`` reads) and ``ChatResponse.additional_kwargs``; when
    streaming, on the last chunk, whose ``delta`` is empty. ``output_tokens``
    includes the model's thinking tokens, also given as ``thinking_tokens``.

    Args:
        api_key: Gemini API key; defaults to ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``.
        **kwargs: The fields below, and ``LLM`` fields such as ``system_prompt``.

    Raises:
        AnswerError: No API key was given or found in the environment.
    """

    service: ClassVar[str] = "Gemini"
    key_variables: ClassVar[tuple[str, ...]] = API_KEY_ENV

    model: str = Field(default=DEFAULT_GEMINI_MODEL, description="Gemini model name.")
    max_tokens: int = Field(
        default=4096,
        gt=0,
        description="Most tokens one answer may use; thinking tokens count against it.",
    )
    temperature: float | None = Field(
        default=None, ge=0.0, le=2.0, description="Sampling temperature; None keeps the model's."
    )
    thinking_budget: int | None = Field(
        default=None,
        ge=-1,
        description="Thinking tokens (0 turns thinking off where the model allows, -1 is "
        "dynamic); None keeps the model's default.",
    )
    max_images: int = Field(
        default=8, ge=0, le=3000, description="Most images in one request; extras are dropped."
    )
    max_image_edge: int = Field(
        default=1536,
        ge=64,
        le=3072,
        description="Images are shrunk to at most this many pixels on the long edge.",
    )
    max_clips: int = Field(
        default=2, ge=0, le=10, description="Most video or audio blocks in one request."
    )
    max_inline_bytes: int = Field(
        default=10 * 2**20,
        gt=0,
        description="Video and audio up to this many bytes in total go inline; the rest "
        "through the Files API.",
    )
    file_poll_interval: float = Field(
        default=2.0, gt=0, description="Seconds between checks of an uploaded file's state."
    )
    file_ready_timeout: float = Field(
        default=300.0, gt=0, description="Seconds an upload may stay PROCESSING."
    )
    max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries on 408/429/5xx, timeouts, lost connections."
    )
    base_url: str | None = Field(
        default=None,
        description="API endpoint; None uses GOOGLE_GEMINI_BASE_URL or Google's own.",
    )
    context_window: int = Field(default=1_048_576, gt=0, description="Model context in tokens.")

    def __init__(self, *, api_key: str | None = None, **kwargs: Any) -> None:
        # Declared again because type checkers synthesise a fields-only __init__ for a
        # pydantic subclass with fields of its own, which would reject api_key=.
        super().__init__(api_key=api_key, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        """The serialisation id."""
        return "GeminiMultimodalLLM"

    # -- the request -------------------------------------------------------------------

    def _request(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> _Request:
        from google.genai import types

        converter = MessageConverter(
            max_images=self.max_images,
            max_image_edge=self.max_image_edge,
            max_clips=self.max_clips,
            max_inline_bytes=self.max_inline_bytes,
        )
        system, turns = converter.convert(messages)

        thinking = (
            types.ThinkingConfig(thinking_budget=self.thinking_budget)
            if self.thinking_budget is not None
            else None
        )
        settings: dict[str, Any] = {
            "system_instruction": system,
            "max_output_tokens": self.max_tokens,
            "temperature": self.temperature,
            "thinking_config": thinking,
        }
        try:
            config = types.GenerateContentConfig(**{**settings, **kwargs})
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise AnswerError(
                f"Gemini: invalid generation options {sorted(kwargs)}; pass fields of "
                f"google.genai.types.GenerateContentConfig ({self._one_line(str(exc))})"
            ) from exc
        return _Request(turns=turns, config=config)

    def _contents(
        self, request: _Request, uploaded: list[str]
    ) -> transport.Steps[list[types.Content]]:
        """Upload the pending media (names go to ``uploaded``) and assemble the contents."""
        from google.genai import types

        contents = []
        for role, parts in request.turns:
            sent = []
            for part in parts:
                if isinstance(part, PendingUpload):
                    file = yield from transport.upload(
                        self.retry_policy(),
                        part.source,
                        mimetype=part.mimetype,
                        display_name=part.label,
                        poll_interval=self.file_poll_interval,
                        ready_timeout=self.file_ready_timeout,
                    )
                    uploaded.append(file.name or "")
                    data = types.FileData(file_uri=file.uri, mime_type=part.mimetype)
                    part = types.Part(file_data=data, video_metadata=part.video_metadata)
                sent.append(part)
            contents.append(types.Content(role=role, parts=sent))
        return contents

    def _delete(self, names: list[str]) -> transport.Steps[None]:
        for name in names:
            yield from transport.delete(self.retry_policy(), name)

    @contextmanager
    def _uploaded(self, request: _Request, client: genai.Client) -> Iterator[list[types.Content]]:
        """The request's contents, with uploads deleted on exit whatever happened."""
        names: list[str] = []
        try:
            yield transport.run(self._contents(request, names), client)
        finally:
            transport.run(self._delete(names), client)

    @asynccontextmanager
    async def _auploaded(
        self, request: _Request, client: genai.Client
    ) -> AsyncIterator[list[types.Content]]:
        """Async :meth:`_uploaded`."""
        names: list[str] = []
        try:
            yield await transport.arun(self._contents(request, names), client)
        finally:
            await transport.arun(self._delete(names), client)

    def _generate(
        self, request: _Request, contents: list[types.Content]
    ) -> transport.Steps[types.GenerateContentResponse]:
        return transport.call(
            self.retry_policy(),
            "models.generate_content",
            model=self.model,
            contents=contents,
            config=request.config,
        )

    # -- the SDK boundary --------------------------------------------------------------

    def _genai_client(self) -> genai.Client:
        if self._client is None:
            self._client = make_client(
                api_key=self._api_key.get_secret_value(),
                policy=self.retry_policy(),
                base_url=self.base_url,
                purpose="Answering with Gemini",
            )
        return self._client

    @contextmanager
    def _api_errors(self, *, timeouts_retried: bool = True) -> Iterator[None]:
        """Translate SDK and network failures (after the retries) into ``RemoteAPIError``.

        Args:
            timeouts_retried: False for an async stream, which goes to the SDK alone:
                it does not retry the timeouts of its async (aiohttp) transport.
        """
        try:
            yield
        except RemoteAPIError:  # an upload the Files API could not process: already told
            raise
        except Exception as exc:
            if not transport.is_failure(exc):
                raise
            retried = transport.is_transient(exc) and (
                timeouts_retried or not isinstance(exc, TimeoutError)
            )
            raise self._remote_error(exc, self.max_retries + 1 if retried else 1) from exc

    def _remote_error(self, exc: Exception, tries: int) -> RemoteAPIError:
        from google.genai import errors

        attempts = f"{tries} attempt(s)"
        if isinstance(exc, errors.APIError):
            status = exc.code
            reason = f"{self.model} failed ({transport.describe(exc)}; {attempts}); {_advice(exc)}"
        elif "Timeout" in type(exc).__name__ or isinstance(exc, TimeoutError):
            status = None
            reason = (
                f"{self.model} gave no answer within {self.timeout:g} s ({attempts}); "
                "raise timeout= or try again later"
            )
        else:
            status = None
            reason = (
                f"cannot reach the API ({transport.describe(exc)}; {attempts}); "
                "check the network and base_url (or GOOGLE_GEMINI_BASE_URL)"
            )
        return RemoteAPIError(transport.SERVICE, self._one_line(reason), status=status)

    def _response(self, reply: Reply) -> ChatResponse:
        usage = reply.usage()
        logger.debug(
            "%s: %d input and %d output tokens, finish reason %s",
            self.model,
            usage["input_tokens"],
            usage["output_tokens"],
            reply.finish_reason,
        )
        blocked = reply.blocked()
        if blocked is not None:
            logger.warning(
                "%s withheld the answer (%s); rephrase the question or answer without Gemini",
                self.model,
                blocked,
            )
        elif reply.finish_reason == "MAX_TOKENS":
            logger.warning(
                "%s: the answer was cut at max_tokens=%d (thinking included); raise max_tokens",
                self.model,
                self.max_tokens,
            )
        elif not reply.text:
            logger.warning(
                "%s returned no text (finish reason %s)", self.model, reply.finish_reason
            )
        raw = {
            "id": reply.response_id,
            "model": reply.model_version or self.model,
            "finish_reason": reply.finish_reason,
            "blocked": blocked,
        }
        return final_response(reply.text, raw=raw, usage=usage)

    # -- chat ----------------------------------------------------------------------------

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Send the messages and return Gemini's reply.

        Args:
            messages: Chat messages with text, image, video and audio blocks.
            **kwargs: ``GenerateContentConfig`` fields for this call (e.g. ``stop_sequences``).

        Raises:
            AnswerError: Nothing to send, an unsupported role or invalid options.
            RemoteAPIError: The API still failed after the retries.
        """
        client = self._genai_client()
        request = self._request(messages, kwargs)
        with self._api_errors(), self._uploaded(request, client) as contents:
            response = transport.run(self._generate(request, contents), client)
        return self._response(Reply.of(response))

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Async :meth:`chat`; reading and shrinking media runs in a worker thread."""
        client = self._genai_client()
        request = await asyncio.to_thread(self._request, messages, kwargs)
        with self._api_errors():
            async with self._auploaded(request, client) as contents:
                response = await transport.arun(self._generate(request, contents), client)
        return self._response(Reply.of(response))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        """Stream Gemini's reply: one response per text delta, then a final one with usage.

        Media is uploaded and the request sent when iteration starts; failures
        surface while iterating.
        """
        client = self._genai_client()
        request = self._request(messages, kwargs)

        def gen() -> ChatResponseGen:
            reply = Reply()
            with self._api_errors(), self._uploaded(request, client) as contents:
                stream = client.models.generate_content_stream(
                    model=self.model, contents=contents, config=request.config
                )
                for chunk in stream:
                    if delta := reply.add(chunk):
                        yield delta_response(reply.text, delta)
            yield self._response(reply)

        return gen()

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        """Async :meth:`stream_chat`."""
        client = self._genai_client()
        request = await asyncio.to_thread(self._request, messages, kwargs)

        async def gen() -> ChatResponseAsyncGen:
            reply = Reply()
            with self._api_errors(timeouts_retried=False):
                async with self._auploaded(request, client) as contents:
                    stream = await client.aio.models.generate_content_stream(
                        model=self.model, contents=contents, config=request.config
                    )
                    async for chunk in stream:
                        if delta := reply.add(chunk):
                            yield delta_response(reply.text, delta)
            yield self._response(reply)

        return gen()


def _advice(exc: Any) -> str:
    status = exc.code
    if status in (401, 403) or transport.blames_the_key(exc):
        return "check GEMINI_API_KEY"
    if status == 404:
        return "check the model name"
    if status == 413:
        return "the request is too large; lower max_images or max_inline_bytes"
    if status == 429:
        return "rate limited or out of quota even after retries; wait and try again"
    if status >= 500:
        return "the service is failing or overloaded; try again later"
    return "check the model name and the request"


__all__ = ["DEFAULT_GEMINI_MODEL", "GeminiMultimodalLLM"]
