"""Claude as a LlamaIndex multimodal, function-calling chat LLM, calling ``anthropic`` directly.

``llama-index-llms-anthropic`` raises on every call with ``anthropic`` 2.x, so this
module owns the translation: LlamaIndex ``ChatMessage`` text and image blocks become
a Messages API request, and the reply (or stream) becomes ``ChatResponse`` objects.
It is a ``FunctionCallingLLM``, so a LlamaIndex ``FunctionAgent`` can run on it: tools
become the API's ``tools`` (name, description, JSON schema), the ``tool_use`` blocks
of a reply become ``ToolCallBlock``s, and tool messages go back as ``tool_result``
blocks (text and images) in the next user turn.
Key handling, ``metadata`` and the completion methods come from
:class:`~llama_index_video.answering.chat_llm.MultimodalChatLLM` (which says why it is
an ``LLM`` and not a ``CustomLLM``). There is no ``temperature``: ``anthropic`` 2.x no
longer takes sampling parameters (pass ``extra_body=`` to a call if an endpoint still
wants them).

Images (a frame's path, raw or base64 bytes, or the ``data:`` URL LlamaIndex's
multimodal prompt templates produce) are shrunk to at most 1568 px on the long edge
and sent as base64 JPEG (:mod:`.images`); ``http(s)`` URLs are passed on for Anthropic
to fetch. At most ``max_images`` go in one request; the rest are dropped with a
warning, first come first kept, so retrieval order decides.

The API key is held privately as a ``SecretStr``: never in ``repr``, ``model_dump``,
``to_json`` or the instrumentation payload, and scrubbed from every error message
this module raises.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, cast

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    ContentBlock,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection

from llama_index_video.answering.chat_llm import (
    MultimodalChatLLM,
    delta_response,
    final_response,
    split_turns,
)
from llama_index_video.answering.images import BlockBudget, jpeg_bytes
from llama_index_video.errors import AnswerError, MissingDependencyError, RemoteAPIError

if TYPE_CHECKING:
    import anthropic
    from llama_index.core.tools.types import BaseTool

logger = logging.getLogger(__name__)

DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-6"
MAX_IMAGE_EDGE = 1568  # Anthropic's recommended long edge; larger images are downscaled anyway
_SERVICE = "Anthropic"


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise MissingDependencyError("anthropic", "anthropic", "Answering with Claude") from exc
    return anthropic


def _remote_url(block: ImageBlock) -> str | None:
    """The ``http(s)`` URL of a block that holds nothing else, for Anthropic to fetch."""
    url = str(block.url) if block.url is not None else ""
    if block.image is None and block.path is None and url.startswith(("http://", "https://")):
        return url
    return None


def _base64_source(jpeg: bytes) -> dict[str, str]:
    return {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": base64.b64encode(jpeg).decode("ascii"),
    }


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
    url = _remote_url(block)
    if url is not None:
        return {"type": "url", "url": url}
    return _base64_source(jpeg_bytes(block, max_edge=max_edge))


class _RequestBuilder:
    """Converts one list of chat messages, counting what it had to leave out."""

    def __init__(self, *, max_images: int, max_edge: int) -> None:
        self.max_images = max_images
        self.max_edge = max_edge
        self.budget = BlockBudget("Claude")

    def build(self, messages: Sequence[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
        system, turns = split_turns(
            messages,
            service="Claude",
            assistant="assistant",
            convert=self._part,
            tool_result=self._tool_result,
        )
        self.budget.report()
        if not turns:
            raise AnswerError("Claude: the messages hold no text or image to send")
        return system, [{"role": role, "content": content} for role, content in turns]

    def _tool_result(self, message: ChatMessage) -> dict[str, Any]:
        """A tool's output (text and images) answering the ``tool_use`` it names."""
        tool_use_id = message.additional_kwargs.get("tool_call_id")
        if not tool_use_id:
            raise AnswerError(
                "Claude: a tool message needs additional_kwargs['tool_call_id'], "
                "the id of the tool_use it answers"
            )
        parts = [part for block in message.blocks if (part := self._part(block)) is not None]
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": parts}

    def _part(self, block: ContentBlock) -> dict[str, Any] | None:
        if isinstance(block, TextBlock):
            return {"type": "text", "text": block.text} if block.text.strip() else None
        if isinstance(block, ToolCallBlock):
            return {
                "type": "tool_use",
                "id": block.tool_call_id,
                "name": block.tool_name,
                "input": _tool_input(block.tool_kwargs),
            }
        if not isinstance(block, ImageBlock):
            self.budget.unsupported(block.block_type)
            return None
        if not self.budget.admit("images", limit=self.max_images, option="max_images"):
            return None
        url = _remote_url(block)
        if url is not None:
            return {"type": "image", "source": {"type": "url", "url": url}}
        jpeg = self.budget.jpeg(block, max_edge=self.max_edge)
        return {"type": "image", "source": _base64_source(jpeg)} if jpeg else None


class ClaudeMultimodalLLM(MultimodalChatLLM, FunctionCallingLLM):
    """Claude through the Messages API, taking LlamaIndex text and image blocks.

    Works wherever LlamaIndex wants a chat LLM, including
    ``RetrieverQueryEngine.from_args(retriever, llm=..., multimodal=True)``, and
    wherever it wants a function-calling one, such as
    ``FunctionAgent(tools=VideoToolSpec(index).to_tool_list(), llm=...)``.
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

    service: ClassVar[str] = "Claude"
    key_variables: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)

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
    base_url: str | None = Field(
        default=None,
        description="API endpoint; None uses ANTHROPIC_BASE_URL or Anthropic's own.",
    )
    context_window: int = Field(default=200_000, gt=0, description="Model context in tokens.")

    def __init__(self, *, api_key: str | None = None, **kwargs: Any) -> None:
        # Declared again because type checkers synthesise a fields-only __init__ for a
        # pydantic subclass with fields of its own, which would reject api_key=.
        super().__init__(api_key=api_key, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        """The serialisation id."""
        return "ClaudeMultimodalLLM"

    @property
    def metadata(self) -> LLMMetadata:
        """As every chat LLM here, and able to call tools."""
        return super().metadata.model_copy(update={"is_function_calling_model": True})

    # -- the SDK boundary --------------------------------------------------------

    def _client_options(self) -> dict[str, Any]:
        return {
            "api_key": self._api_key.get_secret_value(),
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
            raise RemoteAPIError(_SERVICE, self._one_line(reason)) from exc
        except anthropic.APIStatusError as exc:
            # A mid-stream ``error`` event arrives on a 200 response: no HTTP status then.
            status = exc.status_code if exc.status_code >= 400 else None
            reason = (
                f"{self.model} failed ({exc.type or 'error'}: {exc.api_message or exc.message}; "
                f"{_attempts(exc.request)}); {_advice(status, exc.type)}"
            )
            raise RemoteAPIError(_SERVICE, self._one_line(reason), status=status) from exc
        except anthropic.AnthropicError as exc:
            reason = f"{self.model} failed: {exc}"
            raise RemoteAPIError(_SERVICE, self._one_line(reason)) from exc

    def _response(self, message: Any) -> ChatResponse:
        text = "".join(block.text for block in message.content if block.type == "text")
        tool_calls = [
            ToolCallBlock(tool_call_id=block.id, tool_name=block.name, tool_kwargs=block.input)
            for block in message.content
            if block.type == "tool_use"
        ]
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
        }
        return final_response(text, raw=raw, usage=usage, tool_calls=tool_calls)

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
                    yield delta_response(text, delta)
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
                        yield delta_response(text, delta)
                    message = await stream.get_final_message()
            yield self._response(message)

        return gen()

    # -- tools -------------------------------------------------------------------------

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The chat arguments offering ``tools`` to Claude (LlamaIndex's agents call this).

        ``tool_choice`` names a tool Claude must call; ``tool_required`` makes it call
        one of them; ``allow_parallel_tool_calls=False`` asks for one call per reply.
        """
        messages = list(chat_history or [])
        if user_msg is not None:
            if isinstance(user_msg, str):
                user_msg = ChatMessage(role=MessageRole.USER, content=user_msg)
            messages.append(user_msg)
        if not tools:
            return {"messages": messages, **kwargs}
        choice: dict[str, Any] = {"type": "any" if tool_required else "auto"}
        if tool_choice is not None:
            choice = {"type": "tool", "name": tool_choice}
        if not allow_parallel_tool_calls:
            choice["disable_parallel_tool_use"] = True
        specs = [
            {
                "name": tool.metadata.get_name(),
                "description": tool.metadata.description,
                "input_schema": tool.metadata.get_parameters_dict(),
            }
            for tool in tools
        ]
        return {"messages": messages, "tools": specs, "tool_choice": choice, **kwargs}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        """The tools Claude called in ``response``, in order.

        Raises:
            AnswerError: It called none and ``error_on_no_tool_call`` is true.
        """
        calls = [
            ToolSelection(
                tool_id=block.tool_call_id or "",
                tool_name=block.tool_name,
                tool_kwargs=_tool_input(block.tool_kwargs),
            )
            for block in response.message.blocks
            if isinstance(block, ToolCallBlock)
        ]
        if not calls and error_on_no_tool_call:
            raise AnswerError(f"Claude: {self.model} answered without calling a tool")
        return calls


def _tool_input(arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A tool call's arguments as a dict (LlamaIndex may hold them as JSON text)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return cast(dict[str, Any], parsed) if isinstance(parsed, dict) else {}


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
