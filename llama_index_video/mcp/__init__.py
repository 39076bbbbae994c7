"""An MCP server over a video index (``llama-index-video mcp``): :mod:`.server`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.mcp.server import build_server, serve_mcp

_EXPORTS: dict[str, str] = {
    "build_server": "llama_index_video.mcp.server",
    "serve_mcp": "llama_index_video.mcp.server",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
