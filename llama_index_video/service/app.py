"""The HTTP API and the page: search, ask and play the cited moment.

Routes::

    GET  /                       the page (static/index.html)
    GET  /static/{file}          its script and style sheet
    GET  /api/health             {"status": "ok", "version", "files", "live_reload", "embedding"}
    GET  /api/search?q=&top_k=&modality=&speaker=&language=&by_chapter=&by_named_speaker=&source=
                                 the ``search --json`` list (the options as ``search``'s;
                                 ``source`` repeated for several recordings)
    POST /api/ask                {"question": str, "top_k": int, "language": str,
                                 "speaker": str, "by_named_speaker": bool} -> the
                                 ``ask --json`` object (the filters as ``/api/search``'s)
    POST /api/ask/stream         the same body -> server-sent events: ``delta`` events
                                 ({"text"}) as the model writes, then one ``answer``
                                 event (the /api/ask object, citations checked), or
                                 an ``error`` event ({"detail", "status"})
    GET  /api/library            the ``list --json`` entries, plus the media links
    GET  /api/transcript?source= a source's transcript units in time order
    GET  /api/transcript?source=&format=srt|vtt|txt|json   that transcript as a download
    GET  /api/chapters?source=   a source's chapters (the ``chapters --json`` list)
    GET  /api/summary?source=    its extractive summary (the ``summarize --json`` object)
    GET  /api/clip?source=&start=&end=   that moment as a file to download (PyAV cut;
                                 times in seconds or mm:ss)
    GET  /media/{content_hash}   an indexed video or audio file (HTTP Range for seeking)
    GET  /frames/{name}          a frame image of an indexed file

The search list is exactly the ``search --json`` contract with three fields added to
every hit (and to every citation of an answer), because the page cannot turn a path
into a URL it may load: ``media_url`` (``/media/<content hash>``, or null for text
documents and files no longer on disk), ``media_type`` (its MIME type) and
``frame_url`` (``/frames/<name>`` or null). Nothing is renamed or removed, so a script
written against ``search --json`` reads the API unchanged.

A streamed answer is checked as a whole at its end, so its citations (and
``unverified``) are only in the ``answer`` event. A bad request, or an error before the
first event (e.g. no vector store), is an ordinary error response; an error while the
model writes ends the stream with an ``error`` event carrying the one line and the
status ``/api/ask`` would have answered.

Bad requests get a 4xx with ``{"detail": "<one line>"}``: a missing or blank ``q``,
``top_k`` outside 1..100, an unknown modality, a blank ``speaker``, a ``speaker`` the
index does not have when nothing is found (the line names the ones it has), a blank
``language`` or one no moment of the index is in when nothing is found (the line names
the languages it holds), or a ``by_chapter`` that is not a boolean (422); a query string that is not
UTF-8 (400) or longer than 16 KiB (414); a body that is not JSON (400), not UTF-8
(400), not ``application/json`` (415) or over 64 KiB (413). The package's own errors
map to statuses by type (:data:`ERROR_STATUS`); anything else is a logged 500 whose
message says only that. Messages never carry API keys or the token. A client that goes
away before its request is read is normal: one debug line, no traceback.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict
from functools import partial
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar
from urllib.parse import quote

from llama_index_video._version import __version__
from llama_index_video.errors import (
    AnswerError,
    EmbeddingError,
    IndexCompatibilityError,
    IndexStorageError,
    MediaError,
    MissingDependencyError,
    MomentRequestError,
    RemoteAPIError,
    TranscriptionError,
    VectorStoreError,
    VideoIndexError,
)
from llama_index_video.schema import parse_modalities, parse_time
from llama_index_video.search.searcher import filters_unmet
from llama_index_video.service.guard import TOKEN_ENV, GuardMiddleware
from llama_index_video.service.live import Answerer, IndexVersions, LiveIndex
from llama_index_video.service.media import (
    FRAME_ROUTE,
    MEDIA_ROUTE,
    MediaCatalog,
    OpenedFileResponse,
)
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.store.collection import CHROMA_TOKEN_ENV
from llama_index_video.store.transcript_export import MEDIA_TYPES, TranscriptFormat
from llama_index_video.transcription.language import language_codes

try:
    from fastapi import FastAPI, HTTPException, Query, Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from fastapi.staticfiles import StaticFiles
    from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
    from starlette.concurrency import iterate_in_threadpool
    from starlette.requests import ClientDisconnect
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("fastapi", "serve", "The HTTP service") from exc

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.results import Answer
    from llama_index_video.store.library import LibraryEntry

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
MAX_TOP_K = 100
MAX_QUERY_CHARS = 2000
MAX_BODY_BYTES = 64 * 1024
DEFAULT_TOP_K = 5
CLIENT_CLOSED_REQUEST = 499  # nginx's status for it; the client never reads it
# Content-addressed URLs never change what they point to.
IMMUTABLE = {"cache-control": "private, max-age=86400, immutable"}

ERROR_STATUS: dict[type[VideoIndexError], int] = {
    VideoIndexError: 500,
    MissingDependencyError: 501,
    IndexCompatibilityError: 409,
    IndexStorageError: 503,
    MediaError: 422,
    TranscriptionError: 503,
    EmbeddingError: 503,
    RemoteAPIError: 502,
    AnswerError: 502,
    VectorStoreError: 503,
    MomentRequestError: 422,
}
"""HTTP status for each package error; a subclass takes its nearest listed base's."""

_SECRET_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    CHROMA_TOKEN_ENV,
)

_Read = TypeVar("_Read")

Question = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
]


class AskRequest(BaseModel):
    """The body of ``POST /api/ask``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: Question
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1, le=MAX_TOP_K)
    language: Annotated[str, StringConstraints(max_length=200)] | None = None
    speaker: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)] | None = None
    by_named_speaker: bool = False

    def filters(self) -> dict[str, Any]:
        """The answerer's filters (those :class:`~llama_index_video.service.live.AskWith`
        takes), read as ``/api/search`` reads ``language`` and ``speaker``; a 422 naming
        one that is blank or bad."""
        return {
            "languages": _listed(language_codes, "language", self.language),
            "speakers": _listed(parse_speakers, "speaker", self.speaker),
            "by_named_speaker": self.by_named_speaker,
        }


def create_app(
    index: VideoIndex,
    *,
    token: str | None = None,
    versions: IndexVersions | None = None,
    answer: Answerer | None = None,
) -> FastAPI:
    """The service over an open index (it never ingests).

    Args:
        index: The index to serve; its embedding model stays loaded.
        token: Required on every request when set (``Authorization: Bearer`` or the
            cookie set by ``/?token=``); when None, only requests addressed to a
            loopback host name are answered. :func:`serve` refuses to bind beyond
            loopback without one.
        versions: Where the index's new versions come from; given, content a separate
            ``ingest`` adds is served without a restart (see
            :mod:`llama_index_video.service.live`).
        answer: How ``POST /api/ask`` answers: ``answer(index, question, top_k)``, e.g.
            ``ask_with(llm)``; None answers extractively (``VideoIndex.ask`` without
            an LLM).

    Returns:
        The ASGI application; ``app.state.live`` is the :class:`LiveIndex` it serves.

    Raises:
        InsecureBindError: the token is too short or has characters URLs or cookies
            would change.
    """
    live = LiveIndex(index, versions=versions, answer=answer)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Load the query path once (tokenizer, vector index) before the first request.
        await run_in_threadpool(live.search, "warm up", top_k=1)
        yield

    app = FastAPI(
        title="llama-index-video",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.live = live
    app.add_middleware(GuardMiddleware, token=token)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    redact = _redactor(token)
    _add_error_handlers(app, redact)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-cache"})

    @app.get("/api/health")
    def health() -> dict[str, Any]:
        with live.reading() as (current, catalog):
            return {
                "status": "ok",
                "version": __version__,
                "files": catalog.file_count,
                "live_reload": live.live,
                "embedding": current.identity,
            }

    @app.get("/api/search")
    def search(
        q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description="the query")],
        top_k: Annotated[int, Query(ge=1, le=MAX_TOP_K)] = DEFAULT_TOP_K,
        modality: Annotated[str | None, Query(max_length=200)] = None,
        speaker: Annotated[
            str | None,
            Query(
                max_length=MAX_QUERY_CHARS,
                description="only what these speakers said, comma-separated "
                "(SPEAKER_2, 2, or a name given to a voice)",
            ),
        ] = None,
        language: Annotated[
            str | None,
            Query(
                max_length=200,
                description="only what was said in these languages, comma-separated "
                "(fr, FR, fr-FR or French)",
            ),
        ] = None,
        by_chapter: Annotated[
            bool, Query(description="score each moment with its chapter's match too")
        ] = False,
        by_named_speaker: Annotated[
            bool,
            Query(description="a question naming a speaker as the one speaking keeps theirs"),
        ] = False,
        source: Annotated[
            list[str] | None,
            Query(
                description="only the moments of this recording (its path, file name or "
                "link, as /api/library lists it); repeat for several",
            ),
        ] = None,
    ) -> JSONResponse:
        query = q.strip()
        if not query:
            raise HTTPException(422, "q: the query is blank")
        speakers = _listed(parse_speakers, "speaker", speaker)
        languages = _listed(language_codes, "language", language)
        hits, catalog = live.search(
            query,
            top_k=top_k,
            modalities=_listed(parse_modalities, "modality", modality),
            speakers=speakers,
            languages=languages,
            by_chapter=by_chapter,
            by_named_speaker=by_named_speaker,
            sources=source,
        )
        if (speakers or languages) and not hits:  # the index has no such speaker, language?
            with live.reading() as (current, _):
                entries = current.library()
            if note := filters_unmet(entries, speakers=speakers, languages=languages):
                raise HTTPException(422, note)
        return JSONResponse(_with_urls([hit.to_dict() for hit in hits], catalog))

    @app.post("/api/ask")
    async def ask(request: Request) -> JSONResponse:
        payload = _parse_ask(await _json_body(request))
        result, catalog = await run_in_threadpool(
            partial(live.ask, top_k=payload.top_k, **payload.filters()), payload.question
        )
        return JSONResponse(_answer_data(result, catalog))

    @app.post("/api/ask/stream")
    async def ask_stream(request: Request) -> StreamingResponse:
        payload = _parse_ask(await _json_body(request))
        events = _answer_events(live, payload, redact)
        first = await run_in_threadpool(next, events)  # an error before it: a plain error
        return StreamingResponse(
            iterate_in_threadpool(chain([first], events)),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    @app.get("/api/library")
    def library() -> JSONResponse:
        with live.reading() as (current, catalog):
            entries = current.library()
            return JSONResponse([{**asdict(e), **_library_urls(e, catalog)} for e in entries])

    @app.get("/api/transcript", response_model=None)
    def transcript(
        source: Annotated[str, Query(max_length=4096, description="an indexed path or link")],
        format: Annotated[TranscriptFormat | None, Query()] = None,
    ) -> JSONResponse | Response:
        with live.reading() as (current, _):
            if format is None:
                return JSONResponse(
                    [asdict(line) for line in _recorded(current.transcript, source)]
                )
            text = _recorded(partial(current.transcript_file, fmt=format), source)
        name = f"{Path(source).stem or 'transcript'}.{format}"
        return Response(
            text,
            media_type=f"{MEDIA_TYPES[format]}; charset=utf-8",
            headers={"Content-Disposition": _attachment(name)},
        )

    @app.get("/api/chapters")
    def chapters(
        source: Annotated[str, Query(max_length=4096, description="an indexed path or link")],
    ) -> JSONResponse:
        with live.reading() as (current, _):
            found = _recorded(current.chapters, source)
        return JSONResponse([chapter.to_dict() for chapter in found])

    @app.get("/api/summary")
    def summary(
        source: Annotated[str, Query(max_length=4096, description="an indexed path or link")],
    ) -> JSONResponse:
        # Extractive (no model call, milliseconds for an hour): the page never spends money.
        with live.reading() as (current, _):
            return JSONResponse(_recorded(current.summarize, source).to_dict())

    @app.get("/api/clip")
    def clip(
        source: Annotated[str, Query(max_length=4096, description="an indexed path or link")],
        start: Annotated[str, Query(max_length=40, description="seconds or mm:ss")],
        end: Annotated[str, Query(max_length=40, description="seconds or mm:ss")],
    ) -> FileResponse:
        from starlette.background import BackgroundTask

        from llama_index_video.service.clips import cut_moment

        begin = _parsed(parse_time, "start", start)
        finish = _parsed(parse_time, "end", end)
        with live.reading() as (current, _):
            path, name = cut_moment(current, source, begin, finish)
        return FileResponse(
            path,
            filename=name,
            background=BackgroundTask(path.unlink, missing_ok=True),
        )

    @app.api_route(MEDIA_ROUTE + "{content_hash}", methods=["GET", "HEAD"])
    def media(content_hash: str) -> FileResponse:
        with live.reading() as (_, catalog):
            found = catalog.media(content_hash)
        if found is None:
            raise HTTPException(404, "no indexed media file has this id")
        return _opened(found.path, found.media_type, "no indexed media file has this id")

    @app.api_route(FRAME_ROUTE + "{name}", methods=["GET", "HEAD"])
    def frame(name: str) -> FileResponse:
        with live.reading() as (_, catalog):
            found = catalog.frame(name)
        if found is None:
            raise HTTPException(404, "no frame of an indexed file has this name")
        return _opened(found, "image/jpeg", "no frame of an indexed file has this name")

    return app


def _recorded(read: Callable[[str], _Read], source: str) -> _Read:
    """``read(source)``; 404 when ``source`` names no indexed recording."""
    try:
        return read(source)
    except MomentRequestError as exc:  # the name is not an indexed recording's
        raise HTTPException(404, str(exc)) from exc


def _opened(path: Path, media_type: str, missing: str) -> OpenedFileResponse:
    """``path`` as it is now, sent whole however it changes meanwhile; 404 if gone."""
    try:
        return OpenedFileResponse(path, media_type=media_type, headers=IMMUTABLE)
    except OSError as exc:  # removed or replaced since the catalog checked it
        raise HTTPException(404, missing) from exc


def _attachment(name: str) -> str:
    """A ``Content-Disposition`` that saves the response as ``name`` (RFC 6266, as
    Starlette writes it for files: ``filename*`` when the name is not plain ASCII)."""
    quoted = quote(name)
    if quoted == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename*=utf-8''{quoted}"


def _listed(parse: Callable[[str], list[str]], name: str, text: str | None) -> list[str] | None:
    """The comma-separated query parameter ``name`` read by ``parse``; None if not given."""
    return None if text is None else _parsed(parse, name, text)


def _parsed(parse: Callable[[str], _Read], name: str, text: str) -> _Read:
    """``parse(text)``, the value of the query parameter ``name``; a 422 naming it if bad."""
    try:
        return parse(text)
    except ValueError as exc:
        raise HTTPException(422, f"{name}: {exc}") from exc


def _library_urls(entry: LibraryEntry, catalog: MediaCatalog) -> dict[str, str | None]:
    return catalog.urls(entry.source, None, entry.path).to_dict() if entry.path else {}


def _with_urls(items: list[dict[str, Any]], catalog: MediaCatalog) -> list[dict[str, Any]]:
    urls = catalog.urls_of([(i["source"], i["frame_path"], i.get("source_path")) for i in items])
    return [{**item, **url.to_dict()} for item, url in zip(items, urls, strict=True)]


async def _json_body(request: Request) -> str:
    """The request body as text, read no further than :data:`MAX_BODY_BYTES`."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise HTTPException(415, "send the body as application/json")
    too_large = HTTPException(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
    declared = request.headers.get("content-length", "0")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise too_large
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, "the body is not valid UTF-8") from exc


def _parse_ask(body: str) -> AskRequest:
    try:
        return AskRequest.model_validate_json(body)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        status = 400 if any(e["type"] == "json_invalid" for e in errors) else 422
        raise HTTPException(status, _describe(errors)) from exc


def _describe(errors: Sequence[Mapping[str, Any]]) -> str:
    """Validation errors as one line: ``top_k: Input should be ... ; q: Field required``."""
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error["loc"] if p not in ("query", "body"))
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    return "; ".join(parts)


def _redactor(token: str | None) -> Callable[[str], str]:
    """``text`` with the API keys and the token this service knows replaced."""
    secrets = [v for v in (os.environ.get(n) for n in (*_SECRET_ENV, TOKEN_ENV)) if v]
    secrets += [token] if token else []

    def redact(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "[redacted]")
        return text

    return redact


def _status(exc: VideoIndexError) -> int:
    return next(ERROR_STATUS[t] for t in type(exc).__mro__ if t in ERROR_STATUS)


def _answer_data(answer: Answer, catalog: MediaCatalog) -> dict[str, Any]:
    """The ``ask --json`` object of ``answer`` with the media links of its moments."""
    data = answer.to_dict()
    data["citations"] = _with_urls(data["citations"], catalog)
    data["hits"] = _with_urls(data["hits"], catalog)
    return data


def _answer_events(
    live: LiveIndex, payload: AskRequest, redact: Callable[[str], str]
) -> Iterator[str]:
    """The server-sent events of one streamed answer (see the module docstring). The
    first ``next`` retrieves the moments and raises the package's errors itself."""
    with live.streaming(payload.question, top_k=payload.top_k, **payload.filters()) as (
        stream,
        catalog,
    ):
        yield _event("start", {"question": payload.question})
        try:
            for delta in stream:
                yield _event("delta", {"text": delta})
            data = _answer_data(stream.answer, catalog)
        except VideoIndexError as exc:
            logger.warning("%s: %s", type(exc).__name__, redact(str(exc)))
            yield _event("error", {"detail": redact(str(exc)), "status": _status(exc)})
            return
    yield _event("answer", data)


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _add_error_handlers(app: FastAPI, redact: Callable[[str], str]) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": redact(_describe(exc.errors()))}, status_code=422)

    @app.exception_handler(VideoIndexError)
    async def package_error(_: Request, exc: VideoIndexError) -> JSONResponse:
        status = _status(exc)
        logger.warning("%s: %s", type(exc).__name__, redact(str(exc)))
        return JSONResponse({"detail": redact(str(exc))}, status_code=status)

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, _: ClientDisconnect) -> Response:
        logger.debug("client went away during %s %s", request.method, request.url.path)
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.error("unexpected error", exc_info=exc)
        return JSONResponse({"detail": "internal error; see the service log"}, status_code=500)
