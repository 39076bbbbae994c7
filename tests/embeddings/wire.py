"""Helpers for the Gemini embedding tests: call sync or async, read what went on the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding


def call(mode: str, model: GeminiMultimodalEmbedding, method: str, *args: Any) -> Any:
    """``model.method(*args)``, or its ``a``-prefixed twin run on a fresh event loop."""
    if mode == "sync":
        return getattr(model, method)(*args)
    return asyncio.run(getattr(model, f"a{method}")(*args))


def parts_of(content: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of one content as sent."""
    return content["parts"]


def kind_of(content: dict[str, Any]) -> tuple[str, str]:
    """``("text", text)``, ``("inline", mime)`` or ``("file", mime)`` for a one-part content."""
    (part,) = parts_of(content)
    if "text" in part:
        return "text", part["text"]
    if "inline_data" in part:
        return "inline", part["inline_data"]["mime_type"]
    return "file", part["file_data"]["mime_type"]


def assert_unit(vector: list[float], dimension: int) -> None:
    """``vector`` has ``dimension`` values and unit length (float32 precision)."""
    assert len(vector) == dimension
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)
