"""``llama-index-video mcp``: the index's tools for MCP clients, on the official SDK.

The server offers the six tools of :class:`~llama_index_video.agents.VideoToolSpec`
(same names, descriptions and parameters, each parameter described from its docstring as
the agent tools are) and each indexed recording's transcript as a resource,
``transcript://<file name>`` (also readable by any file name through the template of the
same form), and as a file in each export format through ``transcript://<file name>/srt``
(``vtt``, ``txt``, ``json``), all through the index's facade. A tool's or resource's
error from this package reaches the client with its one line (an MCP tool error; for a
resource, an ``invalid params`` error when the name is not a recording's) and the
server's log gets that line, never a traceback. Everything is marked read-only: no tool
writes the index, a source can only be named as the index recorded it, and messages pass
through :func:`~llama_index_video.api_keys.scrub`. ``describe_screen`` answers with the
frame itself as image content after its JSON, so a client's vision model sees the
screen, not only a path. The one tool that writes, ``export_clip``, cuts a moment into
the export folder (``exports/`` in the index folder unless ``export_dir`` says where)
and answers with its JSON and a link to the file (resource link content). While a
``serve`` runs over the same folder (or given ``service_url``), moments link to its
page's deep links rather than to files. The resource
list is refreshed at each listing: a recording ingested while the server runs is listed
too.

Like ``serve``, it reads a private copy of each version a writer finishes
(:class:`~llama_index_video.service.live.LiveIndex`): an ``ingest`` replacing a file
never shows the tools a half-written state.

Over stdio (the default) a client starts it as a subprocess. With ``http=True`` it
serves streamable HTTP at ``http://HOST:PORT/mcp``: on loopback by default; any other
address needs a token (the rule of ``serve``, :mod:`llama_index_video.service.guard`),
sent as ``Authorization: Bearer TOKEN``. The tools and the SDK are imported when a
server is built: the CLI reads :data:`DEFAULT_PORT` while it parses arguments.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, unquote

from llama_index_video import schema
from llama_index_video._version import __version__
from llama_index_video.api_keys import scrub
from llama_index_video.errors import MissingDependencyError, MomentRequestError, VideoIndexError

if TYPE_CHECKING:
    from mcp.server.mcpserver import Image, MCPServer
    from mcp.types import ResourceLink
    from pydantic import BaseModel

    from llama_index_video.index import VideoIndex
    from llama_index_video.service.live import LiveIndex
    from llama_index_video.store.library import TranscriptLine
    from llama_index_video.store.recording_names import IndexedSource

DEFAULT_PORT = 8765
EXPORTS_FOLDER = "exports"
"""Where ``export_clip`` writes in the index folder, unless told otherwise."""
INSTRUCTIONS = (
    "Search and read indexed video and audio recordings. Start with search_moments; "
    "read_transcript reads around a moment; cite moments by their labels "
    "([file mm:ss-mm:ss]) and give their urls."
)


def build_server(index: VideoIndex | LiveIndex, **options: Any) -> MCPServer:
    """An ``MCPServer`` with the tools of ``VideoToolSpec(index, **options)`` and the
    transcripts as resources. Given a ``LiveIndex``, every call reads its current version.

    Raises:
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise MissingDependencyError("mcp", "mcp", "The MCP server") from exc
    from llama_index_video.agents.tool_spec import EXPORT_TOOL, TOOL_NAMES, VideoToolSpec
    from llama_index_video.service.live import LiveIndex
    from llama_index_video.store.transcript_export import MEDIA_TYPES, TRANSCRIPT_FORMATS

    live = index if isinstance(index, LiveIndex) else LiveIndex(index)
    with live.reading() as (first, _):
        spec = VideoToolSpec(first, **options)
    specs = {id(first): spec}

    def current(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with live.reading() as (now, _):
                if id(now) not in specs:  # a new version: the tools of it
                    specs.clear()
                    specs[id(now)] = VideoToolSpec(now, **options)
                return getattr(specs[id(now)], name)(*args, **kwargs)

        return wraps(getattr(spec, name))(call)

    server: MCPServer = MCPServer(
        "llama-index-video", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    schemas = {tool.metadata.name: tool.metadata.fn_schema for tool in spec.to_tool_list()}
    for name in TOOL_NAMES:
        tool: Callable[..., Any] = _tool_errors(current(name))
        if name == "describe_screen":
            tool = _with_frame(tool)
        server.add_tool(
            _described(tool, schemas.get(name)),
            name=name,
            annotations=read_only,
            structured_output=False,
        )
    if spec.export_dir is not None:
        server.add_tool(
            _described(_with_link(_tool_errors(current(EXPORT_TOOL))), schemas.get(EXPORT_TOOL)),
            name=EXPORT_TOOL,
            annotations=ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            structured_output=False,
        )

    def read(name: str) -> str:
        with live.reading() as (now, _):
            recording, lines = _transcript(now, name)
        return "\n".join(
            f"{schema.moment_label(recording.name, line.start, line.end)}"
            f"{f' {line.speaker}:' if line.speaker else ''} {line.text}"
            for line in lines
        )

    server.resource(
        "transcript://{name}",
        name="transcript",
        description="The transcript of an indexed recording by file name, one labelled line "
        "per unit, with its speaker where the index knows it",
        mime_type="text/plain",
    )(read)
    for fmt in TRANSCRIPT_FORMATS:
        server.resource(
            f"transcript://{{name}}/{fmt}",
            name=f"transcript.{fmt}",
            description=f"The transcript of an indexed recording by file name as {fmt}: every "
            "unit with its times, speaker and language",
            mime_type=MEDIA_TYPES[fmt],
        )(_exporter(live, fmt))
    listed: set[str] = set()
    with live.reading() as (now, _):
        _list_transcripts(server, now, read, listed)
    list_resources = server.list_resources

    async def refreshed() -> list[Any]:
        # A recording ingested since the server started is listed too (the manifest and
        # the stored rows are read afresh); the templates read any of them anyway.
        with live.reading() as (now, _):
            _list_transcripts(server, now, read, listed)
        return await list_resources()

    server.list_resources = refreshed  # type: ignore[method-assign]
    return server


def _list_transcripts(
    server: MCPServer, index: VideoIndex, read: Callable[[str], str], listed: set[str]
) -> None:
    """Add a ``transcript://<file name>`` resource for each indexed recording with speech
    that is not ``listed`` yet (``listed`` gets their URIs)."""
    for entry in index.library():
        if entry.status != "indexed" or not entry.moments.get("transcript"):
            continue
        file_name = Path(entry.source).name
        uri = f"transcript://{quote(file_name)}"
        if uri in listed:
            continue
        listed.add(uri)
        server.resource(
            uri,
            name=f"transcript of {file_name}",
            description=f"What was said in {entry.source}",
            mime_type="text/plain",
        )(_reader(read, entry.path or entry.source))


def _reader(read: Callable[[str], str], source: str) -> Callable[[], str]:
    def transcript() -> str:
        return read(source)

    return transcript


def _exporter(live: LiveIndex, fmt: str) -> Callable[[str], str]:
    def export(name: str) -> str:
        try:
            with live.reading() as (index, _):
                return index.transcript_file(unquote(name), fmt=fmt)
        except VideoIndexError as exc:
            raise _resource_error(exc) from None

    return export


def _transcript(index: VideoIndex, name: str) -> tuple[IndexedSource, list[TranscriptLine]]:
    """The recording a resource names and its transcript, the package's errors raised
    as MCP resource errors."""
    try:
        recording = index.recording(unquote(name))
        return recording, index.transcript(recording)
    except VideoIndexError as exc:
        raise _resource_error(exc) from None


def _tool_errors(tool: Callable[..., str]) -> Callable[..., str]:
    """``tool`` raising the package's errors as MCP tool errors (``isError``, the one
    line for the model, logged by the SDK without a traceback)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except VideoIndexError as exc:
            raise ToolError(scrub(str(exc))) from None

    return run


def _described(tool: Callable[..., Any], fn_schema: type[BaseModel] | None) -> Callable[..., Any]:
    """``tool`` with each parameter's description (LlamaIndex's reading of its docstring's
    ``Args:``) in its signature, where the SDK puts it into the tool's input schema."""
    from pydantic import Field

    properties = fn_schema.model_json_schema().get("properties", {}) if fn_schema else {}
    signature = inspect.signature(tool, eval_str=True)
    parameters = [
        parameter.replace(annotation=Annotated[parameter.annotation, Field(description=described)])
        if (described := properties.get(parameter.name, {}).get("description"))
        else parameter
        for parameter in signature.parameters.values()
    ]
    tool.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return tool


def _with_frame(tool: Callable[..., str]) -> Callable[..., list[str | Image]]:
    """``describe_screen`` answering with its JSON and then the frame it names as an image."""
    from mcp.server.mcpserver import Image

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> list[str | Image]:
        text = tool(*args, **kwargs)
        frame = json.loads(text).get("frame_path")
        if frame and Path(frame).is_file():
            return [text, Image(path=frame)]
        return [text]

    return run


def _with_link(tool: Callable[..., str]) -> Callable[..., list[str | ResourceLink]]:
    """``export_clip`` answering with its JSON and then a link to the file it wrote."""
    import mimetypes

    from mcp.types import ResourceLink

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> list[str | ResourceLink]:
        text = tool(*args, **kwargs)
        path = Path(json.loads(text)["path"])
        link = ResourceLink(
            type="resource_link",
            name=path.name,
            uri=path.as_uri(),
            mime_type=mimetypes.guess_type(path.name)[0],
            size=path.stat().st_size,
        )
        return [text, link]

    return run


def _resource_error(exc: VideoIndexError) -> Exception:
    """The MCP error a resource read answers for ``exc``: invalid params when the name
    is not an indexed recording's, else an internal error; both with the one line."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    kind = ResourceNotFoundError if isinstance(exc, MomentRequestError) else ResourceError
    return kind(scrub(str(exc)))


def serve_mcp(
    index_dir: str | Path,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    export_dir: str | Path | None = None,
    service_url: str | None = None,
    **index_options: Any,
) -> None:
    """Serve the index in ``index_dir`` over stdio, or streamable HTTP, until stopped;
    ``export_clip`` writes into ``export_dir`` (default: ``exports/`` in ``index_dir``).
    Moments link to the page of ``service_url``, else of a ``serve`` running over the
    same folder when the call is made (:mod:`llama_index_video.service.address`), else
    to their files.

    Raises:
        InsecureBindError: HTTP beyond loopback without a token, or a weak token.
        VideoIndexError: ``index_dir`` holds no index, or ``service_url`` is no URL.
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    from llama_index_video.service.guard import TOKEN_ENV, GuardMiddleware, check_bind

    token = (token or os.environ.get(TOKEN_ENV) or None) if http else None
    if http:
        check_bind(host, token)
    from llama_index_video.service.address import running_page
    from llama_index_video.service.live import IndexVersions, LiveIndex
    from llama_index_video.store.folder import IndexFolder

    folder = Path(index_dir)
    IndexFolder(folder).require()
    if service_url is not None and not service_url.startswith(("http://", "https://")):
        raise VideoIndexError(f"--service-url {service_url!r}: give the page's http(s):// URL")

    # Each version a writer finishes, from a private copy (see service.live), so an
    # ingest replacing a file never shows the tools a half-written state.
    versions = IndexVersions.of_folder(folder, **index_options)
    live = LiveIndex(versions.first(), versions=versions)
    try:
        server = build_server(
            live,
            export_dir=export_dir or folder / EXPORTS_FOLDER,
            page_url=service_url or (lambda: running_page(folder)),
        )
        with live.reading() as (index, _):  # the first call is as fast as the rest
            index.embed_model.get_query_embedding("warm up")
        if not http:
            server.run("stdio")
            return
        import uvicorn

        app = GuardMiddleware(server.streamable_http_app(host=host), token=token)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        live.close()
