"""``llama-index-video mcp``: its options, and the call into :mod:`llama_index_video.mcp`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from llama_index_video.mcp.server import DEFAULT_PORT
from llama_index_video.service.guard import TOKEN_ENV


def add_mcp_parser(
    commands: Any, index_option: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="serve the index's tools to MCP clients (stdio, or --http)",
        description="An MCP server with the index's read-only tools (search_moments, ask, "
        "list_recordings, read_transcript, describe_screen) and transcripts as resources. "
        "Over stdio by default; --http serves streamable HTTP at http://HOST:PORT/mcp, on "
        "loopback unless a token is set.",
    )
    index_option(parser)
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address for --http (default: loopback)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port for --http")
    parser.add_argument(
        "--token", default=None, help=f"required of HTTP clients (default: ${TOKEN_ENV})"
    )
    return parser


def run_mcp(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    from llama_index_video.mcp.server import serve_mcp

    serve_mcp(
        args.index,
        http=args.http,
        host=args.host,
        port=args.port,
        token=args.token,
        **index_options,
    )
    return 0
