"""``llama-index-video mcp``: the index's tools for MCP clients, on the official SDK.

The server offers the five tools of :class:`~llama_index_video.agents.VideoToolSpec`
(same names, descriptions and parameters; a result the spec reports as
``{"error": ...}`` becomes an MCP tool error with that one line) and each indexed
recording's transcript as a resource, ``transcript://<file name>`` (also readable by
any file name through the template of the same form), and as a file in each export
format through ``transcript://<file name>/srt`` (``vtt``, ``txt``, ``json``). Everything is marked
read-only: no tool writes the index, a source can only be named as the index
recorded it, and messages pass through :func:`~llama_index_video.api_keys.scrub`.

Over stdio (the default) a client starts it as a subprocess. With ``http=True`` it
serves streamable HTTP at ``http://HOST:PORT/mcp``: on loopback by default; any other
address needs a token (the rule of ``serve``, :mod:`llama_index_video.service.guard`),
sent as ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from llama_index_video import schema
from llama_index_video._version import __version__
from llama_index_video.agents.tool_spec import TOOL_NAMES, VideoToolSpec
from llama_index_video.errors import MissingDependencyError, VideoIndexError
from llama_index_video.store.library import resolve_source, transcript
from llama_index_video.store.transcript_export import (
    MEDIA_TYPES,
    TRANSCRIPT_FORMATS,
    render_transcript,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from llama_index_video.index import VideoIndex

DEFAULT_PORT = 8765
INSTRUCTIONS = (
    "Search and read indexed video and audio recordings. Start with search_moments; "
    "read_transcript reads around a moment; cite moments by their labels "
    "([file mm:ss-mm:ss]) and give their links."
)


def build_server(index: VideoIndex, **options: Any) -> MCPServer:
    """An ``MCPServer`` with the tools of ``VideoToolSpec(index, **options)`` and the
    transcripts as resources.

    Raises:
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise MissingDependencyError("mcp", "mcp", "The MCP server") from exc
    spec = VideoToolSpec(index, **options)
    server: MCPServer = MCPServer(
        "llama-index-video", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    for name in TOOL_NAMES:
        server.add_tool(
            _raising(getattr(spec, name)),
            name=name,
            annotations=read_only,
            structured_output=False,
        )

    def read(name: str) -> str:
        recording = resolve_source(index.manifest, unquote(name))
        lines = transcript(index.vector_store, recording.content_hash)
        return "\n".join(
            f"{schema.moment_label(recording.name, line.start, line.end)} {line.text}"
            for line in lines
        )

    server.resource(
        "transcript://{name}",
        name="transcript",
        description="The transcript of an indexed recording by file name, one labelled line "
        "per unit",
        mime_type="text/plain",
    )(read)
    for fmt in TRANSCRIPT_FORMATS:
        server.resource(
            f"transcript://{{name}}/{fmt}",
            name=f"transcript.{fmt}",
            description=f"The transcript of an indexed recording by file name as {fmt}: every "
            "unit with its times, speaker and language",
            mime_type=MEDIA_TYPES[fmt],
        )(_exporter(index, fmt))
    for entry in index.library():
        if entry.status != "indexed" or not entry.moments.get("transcript"):
            continue
        file_name = Path(entry.source).name
        server.resource(
            f"transcript://{quote(file_name)}",
            name=f"transcript of {file_name}",
            description=f"What was said in {entry.source}",
            mime_type="text/plain",
        )(_reader(read, entry.path or entry.source))
    return server


def _reader(read: Callable[[str], str], source: str) -> Callable[[], str]:
    def transcript() -> str:
        return read(source)

    return transcript


def _exporter(index: VideoIndex, fmt: str) -> Callable[[str], str]:
    def export(name: str) -> str:
        recording = resolve_source(index.manifest, unquote(name))
        lines = transcript(index.vector_store, recording.content_hash)
        return render_transcript(lines, fmt=fmt, source=recording.source)

    return export


def _raising(tool: Callable[..., str]) -> Callable[..., str]:
    """The spec's ``{"error": ...}`` result as an MCP tool error (``isError``)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> str:
        text = tool(*args, **kwargs)
        if text.startswith('{"error":'):
            raise ToolError(json.loads(text)["error"])
        return text

    return run


def serve_mcp(
    index_dir: str | Path,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    **index_options: Any,
) -> None:
    """Serve the index in ``index_dir`` over stdio, or streamable HTTP, until stopped.

    Raises:
        InsecureBindError: HTTP beyond loopback without a token, or a weak token.
        VideoIndexError: ``index_dir`` holds no index.
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    from llama_index_video.service.guard import TOKEN_ENV, GuardMiddleware, check_bind

    token = (token or os.environ.get(TOKEN_ENV) or None) if http else None
    if http:
        check_bind(host, token)
    folder = Path(index_dir)
    if not (folder / "manifest.sqlite").is_file():
        raise VideoIndexError(
            f"{folder}: no index here; create it with "
            f"'llama-index-video ingest PATH --index {folder}'"
        )
    from llama_index_video.index import VideoIndex

    index = VideoIndex(folder, **index_options)
    try:
        server = build_server(index)
        index.embed_model.get_query_embedding("warm up")  # the first call is as fast as the rest
        if not http:
            server.run("stdio")
            return
        import uvicorn

        app = GuardMiddleware(server.streamable_http_app(host=host), token=token)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        index.close()
