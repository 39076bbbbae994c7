"""What both multimodal LLMs promise alike."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from llama_index_video.errors import MissingDependencyError


@pytest.mark.parametrize(
    ("module", "name", "sdk", "extra"),
    [
        ("claude", "ClaudeMultimodalLLM", "anthropic", "anthropic"),
        ("gemini_llm", "GeminiMultimodalLLM", "google.genai", "gemini"),
    ],
)
def test_the_sdk_is_imported_lazily_and_its_absence_names_the_extra(
    monkeypatch, module, name, sdk, extra
):
    path = f"llama_index_video.answering.{module}"
    code = f"import sys, {path}; print({sdk!r} in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"

    llm = getattr(importlib.import_module(path), name)(api_key="k")
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(MissingDependencyError, match=rf"llama-index-video\[{extra}\]"):
        llm.chat([ChatMessage(role=MessageRole.USER, blocks=[TextBlock(text="hi")])])
