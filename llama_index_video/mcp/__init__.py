"""An MCP server over a video index (``llama-index-video mcp``; the ``mcp`` extra)."""

from __future__ import annotations

from llama_index_video.mcp.server import build_server, serve_mcp

__all__ = ["build_server", "serve_mcp"]
