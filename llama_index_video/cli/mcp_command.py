"""``llama-index-video mcp``: its options, the call into :mod:`llama_index_video.mcp`, and
``--print-config``, the block an MCP client's configuration needs to start this server.

A desktop client (Claude Desktop, an IDE) starts a stdio server with a command and
arguments, from its own working directory and with its own ``PATH``, which rarely holds
a virtualenv's ``bin``: so the block names the executable and the index by absolute
paths, under the ``mcpServers`` key those clients read. Printing it opens nothing and
imports no LlamaIndex.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from llama_index_video.cli.options import index_option
from llama_index_video.mcp.server import DEFAULT_PORT, EXPORTS_FOLDER
from llama_index_video.service.guard import TOKEN_ENV

COMMAND_NAME = "llama-index-video"
SERVER_NAME = "video-index"  # the key under mcpServers; a client shows it as the server's name


def add_mcp_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="serve the index's tools to MCP clients (stdio, or --http)",
        description="An MCP server with the index's read-only tools (search_moments, ask, "
        "list_recordings, read_transcript, describe_screen, summarize_recording), "
        "export_clip (cuts a moment into --export-dir) and transcripts as resources. "
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
    parser.add_argument(
        "--export-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"where export_clip writes clips (default: {EXPORTS_FOLDER}/ in the index folder)",
    )
    parser.add_argument(
        "--service-url",
        default=None,
        metavar="URL",
        help="link moments to this service's page (default: a serve running over the "
        "same index folder, else the files)",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the mcpServers block for a client's configuration (absolute paths) and exit",
    )
    return parser


def client_config(
    index: str | Path,
    *,
    http: bool,
    host: str,
    port: int,
    store_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``mcpServers`` block that starts (stdio) or reaches (``http``) this server.

    The stdio block names this installation's ``llama-index-video`` executable (or, where
    there is none, this Python running the package) and the index by absolute paths;
    ``store_options`` (``chroma_url``, ``collection``) are passed on as their flags.
    """
    if http:
        return {"mcpServers": {SERVER_NAME: {"url": f"http://{host}:{port}/mcp"}}}
    args = ["mcp", "--index", os.path.abspath(index)]
    for name, value in (store_options or {}).items():
        if value is not None:
            args += [f"--{name.replace('_', '-')}", str(value)]
    executable = _executable()
    if executable is None:
        executable = os.path.abspath(sys.executable)
        args = ["-m", "llama_index_video.cli.main", *args]
    return {"mcpServers": {SERVER_NAME: {"command": executable, "args": args}}}


def _executable() -> str | None:
    """The ``llama-index-video`` script beside this Python (a virtualenv's ``bin``), or on
    ``PATH``; an absolute path, symlinks kept (resolving the virtualenv's python would
    leave the virtualenv)."""
    beside = Path(os.path.abspath(sys.executable)).parent / COMMAND_NAME
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(COMMAND_NAME)
    return os.path.abspath(found) if found else None


def run_mcp(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    if args.print_config:
        config = client_config(
            args.index,
            http=args.http,
            host=args.host,
            port=args.port,
            store_options={
                **index_options,
                "export_dir": os.path.abspath(args.export_dir) if args.export_dir else None,
                "service_url": args.service_url,
            },
        )
        print(json.dumps(config, indent=2))
        return 0
    from llama_index_video.mcp.server import serve_mcp

    serve_mcp(
        args.index,
        http=args.http,
        host=args.host,
        port=args.port,
        token=args.token,
        export_dir=args.export_dir,
        service_url=args.service_url,
        **index_options,
    )
    return 0
