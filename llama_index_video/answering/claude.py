"""Claude as a LlamaIndex multimodal chat LLM, calling the ``anthropic`` SDK directly.

``llama-index-llms-anthropic`` raises on every call with ``anthropic`` 2.x, so this
module owns the translation: LlamaIndex ``ChatMessage`` text and image blocks become
a Messages API request, and the reply (or stream) becomes ``ChatResponse`` objects.

Why it subclasses ``LLM`` and not ``CustomLLM``: ``CustomLLM.chat`` flattens the
messages into one prompt string, which loses the images, and its async methods run
the sync ones on the event loop. Here the four chat methods are implemented against
the SDK's sync and async clients, and the completion methods are derived from them.
There is no ``temperature``: ``anthropic`` 2.x no longer takes sampling parameters
(pass ``extra_body=`` to a call if an endpoint still wants them).

Images (a frame's path, raw or base64 bytes, or the ``data:`` URL LlamaIndex's
multimodal prompt templates produce) are shrunk to at most 1568 px on the long edge
and sent as base64 JPEG; ``http(s)`` URLs are passed on for Anthropic to fetch. At most
``max_images`` go in one request; the rest are dropped with a warning, first come
first kept, so retrieval order decides.

The API key is held privately: it is not a field, so it never shows in ``repr``,
``model_dump``, ``to_json`` or the instrumentation payload, and it is scrubbed from
every error message this module raises.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.generic_utils import (
    achat_to_completion_decorator,
    astream_chat_to_completion_decorator,
    chat_to_completion_decorator,
    stream_chat_to_completion_decorator,
)
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    ContentBlock,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.llm import LLM
from PIL import Image

from llama_index_video.errors import AnswerError, MissingDependencyError, RemoteAPIError

if TYPE_CHECKING:
    import anthropic

logger = logging.getLogger(__name__)

DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-6"
MAX_IMAGE_EDGE = 1568  # Anthropic's recommended long edge; larger images are downscaled anyway
_JPEG_QUALITY = 85
_SERVICE = "Anthropic"

_SYSTEM_ROLES = frozenset({MessageRole.SYSTEM, MessageRole.DEVELOPER})
_API_ROLES = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.CHATBOT: "assistant",
    MessageRole.MODEL: "assistant",
}


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise MissingDependencyError("anthropic", "anthropic", "Answering with Claude") from exc
    return anthropic


def encode_image(block: ImageBlock, *, max_edge: int = MAX_IMAGE_EDGE) -> dict[str, str]:
    """Turn an image block into the ``source`` of a Messages API ``image`` block.

    Args:
        block: A LlamaIndex image block holding bytes (raw or base64), a file path,
            a ``data:`` URL or an ``http(s)`` URL.
        max_edge: Longest edge in pixels after shrinking; smaller images are kept as is.

    Returns:
        ``{"type": "url", "url": ...}`` for remote URLs, otherwise
        ``{"type": "base64", "media_type": "image/jpeg", "data": ...}``.

    Raises:
        OSError: The image cannot be read or decoded.
        ValueError: The block holds no image data.
    """
    url = str(block.url) if block.url is not None else ""
    if block.image is None and block.path is None and url.startswith(("http://", "https://")):
        return {"type": "url", "url": url}
    data = block.resolve_image().read()
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((max_edge, max_edge))  # keeps the aspect ratio, never enlarges
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=_JPEG_QUALITY)
    return {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": base64.b64encode(buffer.getvalue()).decode("ascii"),
    }


class _RequestBuilder:
    """Converts one list of chat messages, counting what it had to leave out."""

    def __init__(self, *, max_images: int, max_edge: int) -> None:
        self.max_images = max_images
        self.max_edge = max_edge
        self.images_seen = 0
        self.unreadable: list[str] = []
        self.unsupported: Counter[str] = Counter()

    def build(self, messages: Sequence[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
        system: list[str] = []
        turns: list[dict[str, Any]] = []
        for message in messages:
            if message.role in _SYSTEM_ROLES:
                system.extend(b.text for b in message.blocks if isinstance(b, TextBlock))
                continue
            role = _API_ROLES.get(message.role)
            if role is None:
                raise AnswerError(
                    f"Claude: messages with role '{message.role.value}' are not supported; "
                    "send user, assistant and system messages only"
                )
            content = [part for block in message.blocks if (part := self._part(block))]
            if not content:
                continue
            if turns and turns[-1]["role"] == role:  # the API wants alternating turns
                turns[-1]["content"].extend(content)
            else:
                turns.append({"role": role, "content": content})
        self._report()
        if not turns:
            raise AnswerError("Claude: the messages hold no text or image to send")
        return "\n\n".join(s for s in system if s.strip()) or None, turns

    def _part(self, block: ContentBlock) -> dict[str, Any] | None:
        if isinstance(block, TextBlock):
            return {"type": "text", "text": block.text} if block.text.strip() else None
        if not isinstance(block, ImageBlock):
            self.unsupported[block.block_type] += 1
            return None
        self.images_seen += 1
        if self.images_seen > self.max_images:
            return None
        try:
            source = encode_image(block, max_edge=self.max_edge)
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            self.unreadable.append(f"{block.path or 'image bytes'} ({exc})")
            return None
        return {"type": "image", "source": source}

    def _report(self) -> None:
        if self.images_seen > self.max_images:
            logger.warning(
                "Claude: sent the first %d of %d images (max_images=%d); dropped the rest",
                self.max_images,
                self.images_seen,
                self.max_images,
            )
        for image in self.unreadable:
            logger.warning("Claude: left out an unreadable image: %s", image)
        for block_type, count in sorted(self.unsupported.items()):
            logger.warning("Claude: left out %d %s block(s) Claude cannot take", count, block_type)


def _one_line(text: str, secret: str) -> str:
    """Collapse ``text`` to one line of at most 300 characters with ``secret`` masked."""
    line = " ".join(text.split()).replace(secret, "***")
    return line if len(line) <= 300 else line[:297] + "..."


class ClaudeMultimodalLLM(LLM):
    """Claude through the Messages API, taking LlamaIndex text and image blocks.

    Works wherever LlamaIndex wants a chat LLM, including
    ``RetrieverQueryEngine.from_args(retriever, llm=..., multimodal=True)``.
    System messages are joined into the API's ``system`` parameter. Token usage of
    each call is in ``ChatResponse.raw["usage"]`` (which LlamaIndex's
    ``TokenCountingHandler`` reads) and ``ChatResponse.additional_kwargs``; when
    streaming, on the last chunk, whose ``delta`` is empty.

    Args:
        api_key: Anthropic API key; defaults to the ``ANTHROPIC_API_KEY`` variable.
        **kwargs: The fields below, and ``LLM`` fields such as ``system_prompt``.

    Raises:
        AnswerError: No API key was given and ``ANTHROPIC_API_KEY`` is not set.
    """

    model: str = Field(default=DEFAULT_CLAUDE_MODEL, description="Claude model name.")
    max_tokens: int = Field(default=1024, gt=0, description="Most tokens one answer may use.")
    max_images: int = Field(
        default=8, ge=0, le=100, description="Most images in one request; extras are dropped."
    )
    max_image_edge: int = Field(
        default=MAX_IMAGE_EDGE,
        ge=64,
        le=MAX_IMAGE_EDGE,
        description="Images are shrunk to at most this many pixels on the long edge.",
    )
    max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries of the SDK on 408/409/429/5xx and timeouts."
    )
    timeout: float = Field(default=120.0, gt=0, description="Seconds allowed for each attempt.")
    base_url: str | None = Field(
        default=None,
        description="API endpoint; None uses ANTHROPIC_BASE_URL or Anthropic's own.",
    )
    context_window: int = Field(default=200_000, gt=0, description="Model context in tokens.")

    _api_key: str = PrivateAttr()
    _client: Any = PrivateAttr(default=None)

    def __init__(self, *, api_key: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        key = api_key or os.environ.get("ANTHROPIC_API_KEY", "")
        if not key.strip():
            raise AnswerError(
                "Claude needs an API key: set ANTHROPIC_API_KEY or pass api_key=, "
                "or answer without an LLM"
            )
        self._api_key = key.strip()

    @classmethod
    def class_name(cls) -> str:
        return "ClaudeMultimodalLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            is_chat_model=True,
            model_name=self.model,
        )

    # -- the SDK boundary --------------------------------------------------------

    def _client_options(self) -> dict[str, Any]:
        return {
            "api_key": self._api_key,
            "base_url": self.base_url,
            "max_retries": self.max_retries,
            "timeout": self.timeout,
        }

    def _sync_client(self) -> anthropic.Anthropic:
        if self._client is None:
            self._client = _import_anthropic().Anthropic(**self._client_options())
        return self._client

    def _async_client(self) -> anthropic.AsyncAnthropic:
        # A new client per call: an async HTTP pool is bound to the event loop that
        # first used it, and callers may run each call under a fresh loop.
        return _import_anthropic().AsyncAnthropic(**self._client_options())

    def _params(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> dict[str, Any]:
        builder = _RequestBuilder(max_images=self.max_images, max_edge=self.max_image_edge)
        system, turns = builder.build(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": turns,
        }
        if system is not None:
            params["system"] = system
        return {**params, **kwargs}

    @contextmanager
    def _api_errors(self) -> Iterator[None]:
        """Translate SDK failures (after its own retries) into this package's errors."""
        anthropic = _import_anthropic()
        try:
            yield
        except anthropic.APITimeoutError as exc:
            reason = (
                f"{self.model} gave no answer within {self.timeout:g} s "
                f"({_attempts(exc.request)}); raise timeout= or try again later"
            )
            raise RemoteAPIError(_SERVICE, reason) from exc
        except anthropic.APIConnectionError as exc:
            reason = (
                f"cannot reach the API ({exc}; {_attempts(exc.request)}); "
                "check the network and ANTHROPIC_BASE_URL"
            )
            raise RemoteAPIError(_SERVICE, _one_line(reason, self._api_key)) from exc
        except anthropic.APIStatusError as exc:
            # A mid-stream ``error`` event arrives on a 200 response: no HTTP status then.
            status = exc.status_code if exc.status_code >= 400 else None
            reason = (
                f"{self.model} failed ({exc.type or 'error'}: {exc.api_message or exc.message}; "
                f"{_attempts(exc.request)}); {_advice(status, exc.type)}"
            )
            raise RemoteAPIError(_SERVICE, _one_line(reason, self._api_key), status=status) from exc
        except anthropic.AnthropicError as exc:
            reason = f"{self.model} failed: {exc}"
            raise RemoteAPIError(_SERVICE, _one_line(reason, self._api_key)) from exc

    def _response(self, message: Any) -> ChatResponse:
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = {
            "input_tokens": message.usage.input_tokens,
            "output_tokens": message.usage.output_tokens,
        }
        logger.debug(
            "%s: %d input and %d output tokens, stop reason %s",
            self.model,
            usage["input_tokens"],
            usage["output_tokens"],
            message.stop_reason,
        )
        if message.stop_reason == "max_tokens":
            logger.warning(
                "%s: the answer was cut at max_tokens=%d; raise max_tokens for longer answers",
                self.model,
                self.max_tokens,
            )
        raw = {
            "id": message.id,
            "model": message.model,
            "stop_reason": message.stop_reason,
            "usage": usage,
        }
        return ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            raw=raw,
            delta="",
            additional_kwargs=dict(usage),
        )

    # -- chat ----------------------------------------------------------------------

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Send the messages and return Claude's reply.

        Args:
            messages: Chat messages with text and image blocks.
            **kwargs: Extra Messages API parameters for this call (e.g. ``stop_sequences``).
        """
        params = self._params(messages, kwargs)
        with self._api_errors():
            message = self._sync_client().messages.create(**params)
        return self._response(message)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Async :meth:`chat`; image shrinking runs in a worker thread."""
        params = await asyncio.to_thread(self._params, messages, kwargs)
        with self._api_errors():
            async with self._async_client() as client:
                message = await client.messages.create(**params)
        return self._response(message)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        """Stream Claude's reply: one response per text delta, then a final one with usage.

        The request is sent when iteration starts; failures surface while iterating.
        """
        params = self._params(messages, kwargs)

        def gen() -> ChatResponseGen:
            text = ""
            with self._api_errors(), self._sync_client().messages.stream(**params) as stream:
                for delta in stream.text_stream:
                    text += delta
                    yield _delta_response(text, delta)
                message = stream.get_final_message()
            yield self._response(message)

        return gen()

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        """Async :meth:`stream_chat`."""
        params = await asyncio.to_thread(self._params, messages, kwargs)

        async def gen() -> ChatResponseAsyncGen:
            text = ""
            with self._api_errors():
                async with (
                    self._async_client() as client,
                    client.messages.stream(**params) as stream,
                ):
                    async for delta in stream.text_stream:
                        text += delta
                        yield _delta_response(text, delta)
                    message = await stream.get_final_message()
            yield self._response(message)

        return gen()

    # -- completion, derived from chat ------------------------------------------------

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Answer a plain prompt (sent as one user message)."""
        return chat_to_completion_decorator(self.chat)(prompt, **kwargs)

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        """Async :meth:`complete`."""
        return await achat_to_completion_decorator(self.achat)(prompt, **kwargs)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        """Stream the answer to a plain prompt."""
        return stream_chat_to_completion_decorator(self.stream_chat)(prompt, **kwargs)

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        """Async :meth:`stream_complete`."""
        return await astream_chat_to_completion_decorator(self.astream_chat)(prompt, **kwargs)


def _delta_response(text: str, delta: str) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta)


def _attempts(request: Any) -> str:
    """How many times the SDK sent the request, from the retry count header it sets."""
    retries = int(request.headers.get("x-stainless-retry-count", "0"))
    return f"{retries + 1} attempt(s)"


def _advice(status: int | None, error_type: str | None) -> str:
    if status in (401, 403) or error_type in ("authentication_error", "permission_error"):
        return "check ANTHROPIC_API_KEY"
    if status == 429 or error_type == "rate_limit_error":
        return "rate limited even after retries; wait and try again, or raise max_retries"
    if (status or 0) >= 500 or error_type in ("api_error", "overloaded_error"):
        return "the service is failing or overloaded; try again later"
    if status == 413 or error_type == "request_too_large":
        return "the request is too large; lower max_images"
    return "check the model name and the request"
