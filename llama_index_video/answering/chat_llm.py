"""What every vendor's multimodal chat LLM here shares, whatever its SDK.

Why our LLMs subclass ``LLM`` and not ``CustomLLM``: ``CustomLLM.chat`` flattens the
messages into one prompt string, which loses the images, and its async methods run
the sync ones on the event loop. A subclass of :class:`MultimodalChatLLM` implements
the four chat methods against its SDK's sync and async clients; the base class gives
it the rest:

- the API key, from ``api_key=`` or the vendor's environment variables, stripped and
  held as a private ``SecretStr``: it is not a field, so it never shows in ``repr``,
  ``model_dump``, ``to_json`` or the instrumentation payload;
- ``metadata`` from the ``model``, ``max_tokens`` and ``context_window`` fields;
- ``_one_line`` for error messages: one line, keys masked (:mod:`llama_index_video.api_keys`);
- the four completion methods, which send the prompt as one user message through chat.

:func:`split_turns` is the message walk both vendors' APIs need (a separate system
prompt, alternating user and assistant turns), with the block conversion left to
the caller; :func:`delta_response` and :func:`final_response` are the responses every
subclass returns, with token usage where LlamaIndex's token counter looks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from llama_index.core.base.llms.generic_utils import (
    achat_to_completion_decorator,
    astream_chat_to_completion_decorator,
    chat_to_completion_decorator,
    stream_chat_to_completion_decorator,
)
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    ContentBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr, SecretStr
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.llm import LLM

from llama_index_video.api_keys import read_api_key, scrub
from llama_index_video.errors import AnswerError

Part = TypeVar("Part")

_SYSTEM_ROLES = frozenset({MessageRole.SYSTEM, MessageRole.DEVELOPER})
_ASSISTANT_ROLES = frozenset({MessageRole.ASSISTANT, MessageRole.CHATBOT, MessageRole.MODEL})


class MultimodalChatLLM(LLM):
    """Base of the vendor LLMs: key handling, metadata, completions derived from chat.

    Subclasses set :attr:`service` and :attr:`key_variables`, give ``model``,
    ``max_tokens`` and ``context_window`` their defaults, and implement ``chat``,
    ``achat``, ``stream_chat`` and ``astream_chat``.

    Args:
        api_key: The API key; defaults to the first of :attr:`key_variables` set.
        **kwargs: The fields, and ``LLM`` fields such as ``system_prompt``.

    Raises:
        AnswerError: No API key was given or found in the environment.
    """

    service: ClassVar[str]
    """The vendor's name, as error messages show it."""
    key_variables: ClassVar[tuple[str, ...]]
    """Environment variables holding the API key, in order of preference."""

    model: str = Field(description="Model name.")
    max_tokens: int = Field(gt=0, description="Most tokens one answer may use.")
    context_window: int = Field(gt=0, description="Model context in tokens.")
    timeout: float = Field(default=120.0, gt=0, description="Seconds allowed for each attempt.")

    _api_key: SecretStr = PrivateAttr()
    _client: Any = PrivateAttr(default=None)  # the SDK client, made on first use

    def __init__(self, *, api_key: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        names = self.key_variables
        key = read_api_key(api_key, names)
        if key is None:
            also = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
            raise AnswerError(
                f"{self.service} needs an API key: set {names[0]}{also} or pass api_key=, "
                "or answer without an LLM"
            )
        self._api_key = SecretStr(key)

    @property
    def metadata(self) -> LLMMetadata:
        """Context window, answer length and model name, for LlamaIndex's prompt fitting."""
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            is_chat_model=True,
            model_name=self.model,
        )

    def _one_line(self, text: str) -> str:
        """``text`` as one line of at most 300 characters, with API keys masked."""
        line = " ".join(scrub(text).split())
        return line if len(line) <= 300 else line[:297] + "..."

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


def split_turns(
    messages: Sequence[ChatMessage],
    *,
    service: str,
    assistant: str,
    convert: Callable[[ContentBlock], Part | None],
    tool_result: Callable[[ChatMessage], Part] | None = None,
) -> tuple[str | None, list[tuple[str, list[Part]]]]:
    """The system prompt and the alternating turns of a conversation.

    System and developer messages are joined into the system prompt. Every other
    block is converted by ``convert`` (``None`` leaves it out); a message left
    empty is skipped, and consecutive messages of one speaker become one turn.

    Args:
        messages: The conversation.
        service: The vendor's name, for the error message.
        assistant: The API's name for the assistant role (``"assistant"``, ``"model"``).
        convert: Turns one content block into the API's part.
        tool_result: Turns a tool message (a tool's output sent back to the model)
            into one part of a user turn; ``None`` refuses tool messages.

    Returns:
        The system prompt (``None`` if there is none) and ``(role, parts)`` turns,
        the user's role being ``"user"``; possibly no turns at all.

    Raises:
        AnswerError: A message has a role the API has no turn for (function; tool
            without ``tool_result``).
    """
    system: list[str] = []
    turns: list[tuple[str, list[Part]]] = []
    for message in messages:
        if message.role in _SYSTEM_ROLES:
            system.extend(b.text for b in message.blocks if isinstance(b, TextBlock))
            continue
        if message.role == MessageRole.TOOL and tool_result is not None:
            role, parts = "user", [tool_result(message)]
        elif message.role in _ASSISTANT_ROLES or message.role == MessageRole.USER:
            role = assistant if message.role in _ASSISTANT_ROLES else "user"
            parts = [part for block in message.blocks if (part := convert(block)) is not None]
        else:
            raise AnswerError(
                f"{service}: messages with role '{message.role.value}' are not supported; "
                "send user, assistant and system messages only"
            )
        if not parts:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(parts)
        else:
            turns.append((role, parts))
    return "\n\n".join(s for s in system if s.strip()) or None, turns


def delta_response(text: str, delta: str) -> ChatResponse:
    """A streamed chunk: the answer so far and the text this chunk added."""
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta)


def final_response(
    text: str,
    *,
    raw: dict[str, Any],
    usage: dict[str, int],
    tool_calls: Sequence[ToolCallBlock] = (),
) -> ChatResponse:
    """The whole answer (the last chunk of a stream, whose delta is empty).

    Token ``usage`` goes into ``raw["usage"]`` and ``additional_kwargs``, where
    LlamaIndex's ``TokenCountingHandler`` reads it (``input_tokens``, ``output_tokens``).
    The tools the model called follow the text as ``ToolCallBlock``s, where
    LlamaIndex's agents look for them.
    """
    blocks: list[ContentBlock] = [TextBlock(text=text), *tool_calls]
    return ChatResponse(
        message=ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks),
        raw={**raw, "usage": usage},
        delta="",
        additional_kwargs=dict(usage),
    )
