"""A video index as tools for LlamaIndex agents: :class:`VideoToolSpec`."""

from __future__ import annotations

from llama_index_video.agents.tool_spec import VideoToolSpec

__all__ = ["VideoToolSpec"]
