"""A video index as tools for LlamaIndex agents: :class:`VideoToolSpec` (:mod:`.tool_spec`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.agents.tool_spec import VideoToolSpec

_EXPORTS: dict[str, str] = {
    "VideoToolSpec": "llama_index_video.agents.tool_spec",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
