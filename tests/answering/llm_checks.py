"""What the tests of every vendor LLM share."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock
from llama_index.core.llms import LLM


def exposures(llm: LLM) -> list[str]:
    """Everywhere an LLM shows its settings: repr, str, serialisations, the payload.

    A test of a secret asserts it is in none of these (nor in logs and errors).
    """
    return [
        repr(llm),
        str(llm),
        llm.to_json(),
        str(llm.to_dict()),
        str(llm.model_dump()),
        llm.model_dump_json(),
        str(llm.to_payload()),
    ]


def agreement_conversation(method: str, frame: Path) -> list[ChatMessage]:
    """What the sync = async tests send through ``method``.

    A system prompt, a labelled frame and a question; only the question for the
    completion methods, which take one prompt.
    """
    question = ChatMessage(role=MessageRole.USER, content="What is shown?")
    if method.endswith("complete"):
        return [question]
    return [
        ChatMessage(role=MessageRole.SYSTEM, content="Cite labels."),
        ChatMessage(
            role=MessageRole.USER,
            blocks=[TextBlock(text="[v.mp4 00:01]"), ImageBlock(path=frame)],
        ),
        question,
    ]
