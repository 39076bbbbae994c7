"""``serve``: open an index folder once and answer over HTTP with uvicorn.

The index is opened (and its embedding model loaded) before the socket is bound, so
the first request is as fast as the thousandth. Each new version a separate ``ingest``
finishes is opened with that model, from a private copy of the folder
(:mod:`llama_index_video.service.live`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import MissingDependencyError
from llama_index_video.service.address import announced, index_settings, page_address
from llama_index_video.service.guard import TOKEN_ENV, check_bind

if TYPE_CHECKING:
    from fastapi import FastAPI
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from llama_index_video.answering.answerer import LlmChoice
    from llama_index_video.search.relevance import Gate
    from llama_index_video.service.live import Answerer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
UVICORN_OPTIONS: dict[str, object] = {
    # h11 rather than httptools: httptools cannot parse a URL over 64 KiB and answers
    # a bare "Invalid HTTP request received.", while h11 buffers a request head up to
    # this bound and hands it to the app, whose guard says "query string longer than
    # 16384 bytes" (414). Beyond 2 MiB h11 refuses with a 400 itself, so the memory a
    # connection can hold is bounded too.
    "http": "h11",
    "h11_max_incomplete_event_size": 2 * 1024 * 1024,
    "access_log": False,
    # Longer than the idle expiry of client pools (httpx and httpcore: 5 s), so the
    # client, not the server, closes an idle keep-alive connection. With uvicorn's 5 s
    # the two raced: a busy service closed a connection the client had just reused,
    # and the client got a ReadError (a few per 50-client load run).
    "timeout_keep_alive": 30,
}


def serve(
    index_dir: str | Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    llm: LlmChoice = "auto",
    llm_model: str | None = None,
    chroma_url: str | None = None,
    collection: str | None = None,
    relevance: Gate | str | None = "auto",
    lexical: bool = True,
) -> None:
    """Serve the index in ``index_dir`` until interrupted.

    Args:
        index_dir: An index folder made by ``llama-index-video ingest``.
        host: Address to bind; anything but loopback needs a token.
        port: TCP port.
        token: Required on every request; defaults to ``$LLAMA_INDEX_VIDEO_TOKEN``.
        llm: Who writes ``POST /api/ask``'s answers: ``"auto"`` picks Claude or Gemini
            by the API key present, else the extractive answer (see ``make_llm``).
        llm_model: The model name for ``llm``.
        chroma_url: The Chroma server holding the index's vectors, if not the one the
            folder recorded. Over a server the service keeps no state of its own, so
            any number of replicas can serve one index behind a load balancer.
        collection: The index's Chroma collection, if not the one the folder recorded.
        relevance: The relevance gate of search and ask (``VideoIndex``'s ``relevance``).
        lexical: Whether search and ask have the lexical channel (``VideoIndex``'s).

    Raises:
        InsecureBindError: ``host`` is not loopback and no token is set, or the token
            is unusable.
        VideoIndexError: ``index_dir`` holds no index, or one this version or
            embedding model cannot read; or the chosen LLM has no API key.
        MissingDependencyError: the ``serve`` extra is not installed.
    """
    token = token or os.environ.get(TOKEN_ENV) or None
    check_bind(host, token)
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError("uvicorn", "serve", "The HTTP service") from exc
    from llama_index_video.answering.answerer import make_llm
    from llama_index_video.service.live import ask_with

    answer = ask_with(make_llm(llm, model=llm_model))
    app = app_for_folder(
        index_dir,
        token=token,
        answer=answer,
        chroma_url=chroma_url,
        collection=collection,
        relevance=relevance,
        lexical=lexical,
    )
    with app.state.live.reading() as (index, _catalog):
        _embed_queries_on_one_thread(index.embed_model)
    settings = index_settings(
        relevance=relevance, lexical=lexical, chroma_url=chroma_url, collection=collection
    )
    _while_serving(app, Path(index_dir), page_address(host, port), settings)
    try:
        # uvicorn's own "running on http://..." line tells the user where, once bound.
        uvicorn.run(app, host=host, port=port, log_level="info", **UVICORN_OPTIONS)  # type: ignore[arg-type]
    finally:
        app.state.live.close()


def _while_serving(app: FastAPI, folder: Path, url: str, settings: dict[str, Any] | None) -> None:
    """Keep the page's address and the index's ``settings`` in ``folder`` from the app's
    start-up to its shutdown (:func:`~llama_index_video.service.address.announced`), so
    other doors over the index link to it (``mcp``) or search through it (``search``);
    at shutdown close the index and delete its private copies. In the lifespan, not
    around ``uvicorn.run``: after a SIGTERM uvicorn ends the process by raising the
    signal again once the app is shut down, so code after ``run`` never runs (each
    SIGTERM left a copy of the index in the temporary folder)."""
    started = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(inner: Any) -> AsyncIterator[Any]:
        async with started(inner) as state:
            try:
                with announced(folder, url, settings=settings):
                    yield state
            finally:
                app.state.live.close()

    app.router.lifespan_context = lifespan


def app_for_folder(
    index_dir: str | Path,
    *,
    token: str | None = None,
    answer: Answerer | None = None,
    chroma_url: str | None = None,
    collection: str | None = None,
    relevance: Gate | str | None = "auto",
    lexical: bool = True,
) -> FastAPI:
    """The service over the index folder ``index_dir``, reopened after each ``ingest``.

    ``token`` and ``answer`` are passed on to :func:`create_app`; ``chroma_url``,
    ``collection``, ``relevance`` and ``lexical`` to
    :class:`~llama_index_video.index.VideoIndex`.

    Raises:
        VideoIndexError: ``index_dir`` holds no index, or one this version or
            embedding model cannot read.
    """
    from llama_index_video.service.app import create_app
    from llama_index_video.service.live import IndexVersions
    from llama_index_video.store.folder import IndexFolder

    folder = IndexFolder(index_dir)
    folder.require()
    versions = IndexVersions.of_folder(
        folder.path,
        chroma_url=chroma_url,
        collection=collection,
        relevance=relevance,
        lexical=lexical,
    )
    return create_app(versions.first(), token=token, versions=versions, answer=answer)


def _embed_queries_on_one_thread(model: BaseEmbedding) -> None:
    """Let each concurrent request have a core instead of the model splitting every one.

    The service embeds queries only, a few dozen tokens each: intra-op threads gain
    nothing on one and, with requests already running in parallel, only contend.
    Measured on two cores, query embedding p50/p95: torch 15-24/77-115 ms with its
    default, 12/13-16 ms with one thread; ONNX Runtime: see docs/benchmarks.md. For
    torch, only set when the embedding model already loaded it.
    """
    from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding

    if isinstance(model, OnnxSentenceEmbedding):
        model.use_threads(1)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
