"""GeminiMultimodalEmbedding: text, images, video, audio and PDF in one vector space.

Google's Gemini Embedding 2 embeds every modality into the same space, so a text
question can land directly on a video clip, a frame or a stretch of audio.

How media reaches the model through ordinary LlamaIndex plumbing:
``VectorStoreIndex`` and ``IngestionPipeline`` hand an embedding model only each
node's embedding *text*. Frame and clip nodes return a
:class:`~llama_index_video.reader.nodes.MediaText` (a ``str`` that also carries the
media's path), and this class embeds that media instead of the words. Used as a
transformation (``embed_model(nodes)``), it also reads LlamaIndex's own ``Node``
media resources (``video_resource``, then ``audio_resource``, then
``image_resource``) and ``ImageNode`` images. Everything else is embedded as text.

The model's known traps, handled here:

- a list of inputs sent as one ``contents`` comes back as ONE aggregated vector:
  every input is sent as its own ``types.Content`` (see ``gemini_inputs``);
- ``task_type`` is ignored by this model: the task goes into the text, as the
  documented prefixes (``query_template`` / ``document_template``);
- truncated (Matryoshka) vectors are not unit length: every vector is
  L2-normalised here, and its length is checked against ``output_dimensionality``;
- one index holds one dimension: :mod:`~llama_index_video.store.dimensions`
  refuses a mismatch.

Failures: the single-item methods raise :class:`RemoteAPIError` (or the
:class:`EmbeddingError` / :class:`MediaError` of an input the model cannot take);
:meth:`GeminiMultimodalEmbedding.try_embed_nodes` embeds what it can and reports
every failure per node, so an ingest keeps the rest and retries the failures
next time. The API key never appears in ``repr``, serialised settings, logs or
error messages.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias

from llama_index.core.base.embeddings.base import Embedding
from llama_index.core.bridge.pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from llama_index.core.embeddings import MultiModalEmbedding
from llama_index.core.schema import BaseNode, ImageType, MetadataMode

from llama_index_video._gemini import transport
from llama_index_video._gemini.client import API_KEY_ENV, RetrySettings, import_genai, make_client
from llama_index_video.api_keys import read_api_key
from llama_index_video.embeddings.gemini_inputs import (
    EmbedInput,
    input_for_node,
    input_for_text,
    media_input,
    text_input,
)
from llama_index_video.embeddings.gemini_requests import (
    EmbeddingUsage,
    Protocol,
    Requests,
    Result,
    UsageCounter,
)
from llama_index_video.errors import (
    EmbeddingError,
    MediaError,
    RemoteAPIError,
    VideoIndexError,
)
from llama_index_video.media.clips import Clip

if TYPE_CHECKING:
    from google import genai
    from typing_extensions import Self

logger = logging.getLogger(__name__)

DEFAULT_MODEL: Final = "gemini-embedding-2"
QUERY_TEMPLATE: Final = "task: search result | query: {text}"
DOCUMENT_TEMPLATE: Final = "title: none | text: {text}"

GEMINI_CLASS_NAME: Final = "GeminiMultimodalEmbedding"
"""Its ``class_name()``, the serialisation id."""

MediaSource: TypeAlias = "str | Path | bytes | Clip"


@dataclass(frozen=True)
class EmbeddingOutcome:
    """What happened to one node of :meth:`GeminiMultimodalEmbedding.try_embed_nodes`."""

    node_id: str
    embedding: list[float] | None
    error: VideoIndexError | None = None

    @property
    def ok(self) -> bool:
        """Whether the node got a vector."""
        return self.error is None


class _NodeText(str):
    """A node's embedding text carrying the input prepared from the node itself."""

    prepared: EmbedInput | VideoIndexError

    def __new__(cls, text: str, prepared: EmbedInput | VideoIndexError) -> _NodeText:
        obj = super().__new__(cls, text)
        obj.prepared = prepared
        return obj


class GeminiMultimodalEmbedding(MultiModalEmbedding, RetrySettings):
    """Gemini Embedding 2 for LlamaIndex: one vector space for text, images, video, audio, PDF.

    Example:
        >>> embed_model = GeminiMultimodalEmbedding(output_dimensionality=1536)
        >>> index = VectorStoreIndex(nodes, embed_model=embed_model)  # doctest: +SKIP

    The API key comes from ``api_key``, else ``GEMINI_API_KEY``, else
    ``GOOGLE_API_KEY``, stripped of surrounding whitespace; it is kept out of
    ``repr``, ``to_dict``/``to_json``, logs and errors.
    """

    embeds_clips: ClassVar[bool] = True
    """It embeds frames and clips natively (:mod:`llama_index_video.embeddings.capabilities`)."""

    model_name: str = Field(
        default=DEFAULT_MODEL, description="The Gemini embedding model (gemini-embedding-2*)."
    )
    output_dimensionality: int = Field(
        default=1536,
        ge=128,
        le=3072,
        description="Vector length (Matryoshka truncation: 768, 1536 or 3072 recommended).",
    )
    embed_batch_size: int = Field(
        default=32,
        gt=0,
        le=2048,
        description=(
            "Inputs per LlamaIndex batch; a batchEmbedContents call takes at most 100, "
            "a Batch API job takes the whole batch."
        ),
    )
    max_concurrency: int = Field(
        default=4, ge=1, description="Requests in flight at once on the async path."
    )
    max_retries: int = Field(
        default=4, ge=0, description="Retries of a request failing with 408/429/5xx or a timeout."
    )
    max_inline_bytes: int = Field(
        default=10 * 2**20,
        gt=0,
        description="Media up to this size is sent inline; larger goes through the Files API.",
    )
    file_poll_interval: float = Field(
        default=2.0, gt=0, description="Seconds between checks of an uploaded file's state."
    )
    file_ready_timeout: float = Field(
        default=300.0, gt=0, description="Seconds an upload may stay PROCESSING."
    )
    use_batch_api: bool = Field(
        default=False,
        description=(
            "Embed node batches through the Batch API (half price, minutes to hours); "
            "queries and single items always use the direct API."
        ),
    )
    batch_poll_interval: float = Field(
        default=30.0, gt=0, description="Seconds between checks of a batch job."
    )
    batch_timeout: float = Field(
        default=24 * 3600.0,
        gt=0,
        description="Seconds a batch job may take before it is cancelled.",
    )
    query_template: str = Field(
        default=QUERY_TEMPLATE, description="Text sent for a query; {text} is the query."
    )
    document_template: str = Field(
        default=DOCUMENT_TEMPLATE, description="Text sent for a document; {text} is its content."
    )
    base_url: str | None = Field(
        default=None, description="API endpoint override (a proxy or a local test server)."
    )

    _api_key: SecretStr = PrivateAttr()
    _runtime: _Runtime = PrivateAttr(default_factory=lambda: _Runtime())
    _usage: UsageCounter = PrivateAttr(default_factory=UsageCounter)

    def __init__(self, *, api_key: str | None = None, **data: Any) -> None:
        """Validate the settings and find the API key (argument, then environment).

        Raises:
            EmbeddingError: no API key was given or found.
            MissingDependencyError: google-genai is not installed.
        """
        super().__init__(**data)
        import_genai(GEMINI_CLASS_NAME)
        key = read_api_key(api_key, API_KEY_ENV)
        if key is None:
            raise EmbeddingError(
                "GeminiMultimodalEmbedding needs an API key: pass api_key=... "
                "or set GEMINI_API_KEY (or GOOGLE_API_KEY)"
            )
        self._api_key = SecretStr(key)

    @classmethod
    def class_name(cls) -> str:
        """The serialisation id."""
        return GEMINI_CLASS_NAME

    @field_validator("query_template", "document_template")
    @classmethod
    def _has_placeholder(cls, template: str) -> str:
        if "{text}" not in template:
            raise ValueError("a template must contain the {text} placeholder")
        return template

    @model_validator(mode="after")
    def _check_settings(self) -> Self:
        if self.embeddings_cache is not None:
            raise ValueError(
                "embeddings_cache keys vectors on text, and a frame or clip node's text does "
                "not identify its media; use an IngestionPipeline cache instead"
            )
        return self

    @model_validator(mode="before")
    @classmethod
    def _old_timeout_name(cls, data: Any) -> Any:
        """``request_timeout`` (0.1 name of ``timeout``) is read, with a warning, until 0.3."""
        if isinstance(data, dict) and "request_timeout" in data:
            warnings.warn(
                "GeminiMultimodalEmbedding(request_timeout=...) is now timeout=..., as on "
                "the Gemini and Claude LLMs; the old name will be removed in the next release",
                DeprecationWarning,
                stacklevel=4,
            )
            data = {**data}
            data.setdefault("timeout", data.pop("request_timeout"))
            data.pop("request_timeout", None)
        return data

    @property
    def request_timeout(self) -> float:
        """Deprecated name of :attr:`timeout`."""
        warnings.warn(
            "GeminiMultimodalEmbedding.request_timeout is now .timeout",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.timeout

    # -- usage -------------------------------------------------------------------------

    @property
    def usage(self) -> EmbeddingUsage:
        """Requests, items, uploads and API-reported tokens so far."""
        return self._usage.snapshot()

    def reset_usage(self) -> None:
        """Start counting :attr:`usage` from zero."""
        self._usage = UsageCounter()

    # -- LlamaIndex hooks --------------------------------------------------------------

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._one(lambda: text_input(query, self.query_template))

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await self._aone(lambda: text_input(query, self.query_template))

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._one(lambda: input_for_text(text, self.document_template))

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await self._aone(lambda: input_for_text(text, self.document_template))

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        results = self._embed(self._prepare_texts(texts), batch=self.use_batch_api)
        return _all_vectors(results)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        results = await self._aembed(self._prepare_texts(texts), batch=self.use_batch_api)
        return _all_vectors(results)

    def _get_image_embedding(self, img_file_path: ImageType) -> Embedding:
        return self._one(lambda: media_input("image", img_file_path))

    async def _aget_image_embedding(self, img_file_path: ImageType) -> Embedding:
        return await self._aone(lambda: media_input("image", img_file_path))

    def _get_image_embeddings(self, img_file_paths: list[ImageType]) -> list[Embedding]:
        return _all_vectors(self._embed(self._prepare_images(img_file_paths), batch=False))

    async def _aget_image_embeddings(self, img_file_paths: list[ImageType]) -> list[Embedding]:
        return _all_vectors(await self._aembed(self._prepare_images(img_file_paths), batch=False))

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        """Embed nodes as a transformation: media natively, the rest as text."""
        vectors = self.get_text_embedding_batch(self._node_texts(nodes), **kwargs)
        for node, vector in zip(nodes, vectors, strict=True):
            node.embedding = vector
        return nodes

    async def acall(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        """Async :meth:`__call__`."""
        vectors = await self.aget_text_embedding_batch(self._node_texts(nodes), **kwargs)
        for node, vector in zip(nodes, vectors, strict=True):
            node.embedding = vector
        return nodes

    # -- media -------------------------------------------------------------------------

    def get_video_embedding(self, video: MediaSource) -> Embedding:
        """Embed an MP4/MOV video of at most 120 s (a path, bytes or a video :class:`Clip`).

        Raises:
            EmbeddingError: not MP4/MOV, or longer than the model takes.
            MediaError: the file does not exist.
            RemoteAPIError: the API still failed after retries.
        """
        return self._one(lambda: media_input("video", video))

    async def aget_video_embedding(self, video: MediaSource) -> Embedding:
        """Async :meth:`get_video_embedding`."""
        return await self._aone(lambda: media_input("video", video))

    def get_audio_embedding(self, audio: MediaSource) -> Embedding:
        """Embed MP3/WAV audio of at most 80 s (a path, bytes or an audio :class:`Clip`).

        Raises:
            EmbeddingError: not MP3/WAV, or longer than the model takes.
            MediaError: the file does not exist.
            RemoteAPIError: the API still failed after retries.
        """
        return self._one(lambda: media_input("audio", audio))

    async def aget_audio_embedding(self, audio: MediaSource) -> Embedding:
        """Async :meth:`get_audio_embedding`."""
        return await self._aone(lambda: media_input("audio", audio))

    def get_pdf_embedding(self, pdf: str | Path | bytes) -> Embedding:
        """Embed a PDF of at most 6 pages (the API rejects longer ones).

        Raises:
            MediaError: the file does not exist.
            RemoteAPIError: the API refused the document or still failed after retries.
        """
        return self._one(lambda: media_input("document", pdf))

    async def aget_pdf_embedding(self, pdf: str | Path | bytes) -> Embedding:
        """Async :meth:`get_pdf_embedding`."""
        return await self._aone(lambda: media_input("document", pdf))

    # -- per-node outcomes, for ingest ----------------------------------------------------

    def try_embed_nodes(self, nodes: Sequence[BaseNode]) -> list[EmbeddingOutcome]:
        """Embed every node it can; failures are reported, not raised.

        Successful nodes get their ``embedding`` set. Uses the Batch API when
        ``use_batch_api`` is on (one job per ``embed_batch_size`` nodes).

        Returns:
            One :class:`EmbeddingOutcome` per node, in order.
        """
        results = self._embed(self._prepare_nodes(nodes), batch=self.use_batch_api)
        return _outcomes(nodes, results)

    async def atry_embed_nodes(self, nodes: Sequence[BaseNode]) -> list[EmbeddingOutcome]:
        """Async :meth:`try_embed_nodes`, at most ``max_concurrency`` requests at a time."""
        results = await self._aembed(self._prepare_nodes(nodes), batch=self.use_batch_api)
        return _outcomes(nodes, results)

    # -- internals ---------------------------------------------------------------------

    def _one(self, make: Callable[[], EmbedInput]) -> Embedding:
        return _single_vector(self._embed([_prepared(make)], batch=False))

    async def _aone(self, make: Callable[[], EmbedInput]) -> Embedding:
        return _single_vector(await self._aembed([_prepared(make)], batch=False))

    def _prepare_texts(self, texts: Sequence[str]) -> list[Prepared]:
        template = self.document_template
        return [
            text.prepared
            if isinstance(text, _NodeText)
            else _prepared(functools.partial(input_for_text, text, template))
            for text in texts
        ]

    def _prepare_images(self, images: Sequence[ImageType]) -> list[Prepared]:
        return [_prepared(functools.partial(media_input, "image", image)) for image in images]

    def _prepare_nodes(self, nodes: Sequence[BaseNode]) -> list[Prepared]:
        template = self.document_template
        return [_prepared(functools.partial(input_for_node, node, template)) for node in nodes]

    def _node_texts(self, nodes: Sequence[BaseNode]) -> list[str]:
        """Each node's embedding text, carrying the input prepared from the node."""
        return [
            _NodeText(node.get_content(metadata_mode=MetadataMode.EMBED), prepared)
            for node, prepared in zip(nodes, self._prepare_nodes(nodes), strict=True)
        ]

    def _embed(self, prepared: list[Prepared], *, batch: bool) -> list[Result]:
        client = self._genai_client()
        outputs = [transport.run(steps, client) for steps in self._protocols(prepared, batch)]
        return self._gather(prepared, outputs)

    async def _aembed(self, prepared: list[Prepared], *, batch: bool) -> list[Result]:
        client = self._genai_client()
        semaphore = self._semaphore()

        async def bounded(steps: Protocol) -> list[Result]:
            async with semaphore:
                return await transport.arun(steps, client)

        protocols = self._protocols(prepared, batch)
        outputs = await asyncio.gather(*(bounded(steps) for steps in protocols))
        return self._gather(prepared, list(outputs))

    def _protocols(self, prepared: list[Prepared], batch: bool) -> list[Protocol]:
        """One protocol per request (or batch job), for the inputs that are ready."""
        requests = Requests(
            model=self.model_name,
            dimension=self.output_dimensionality,
            policy=self.retry_policy(),
            batch_size=self.embed_batch_size,
            max_inline_bytes=self.max_inline_bytes,
            file_poll_interval=self.file_poll_interval,
            file_ready_timeout=self.file_ready_timeout,
            batch_poll_interval=self.batch_poll_interval,
            batch_timeout=self.batch_timeout,
            usage=self._usage,
        )
        inputs = [item for item in prepared if isinstance(item, EmbedInput)]
        return requests.protocols(inputs, batch=batch)

    def _gather(self, prepared: list[Prepared], outputs: list[list[Result]]) -> list[Result]:
        """Put request outputs back in input order, beside the inputs that failed early."""
        answers = iter([result for output in outputs for result in output])
        results = [
            item if isinstance(item, VideoIndexError) else next(answers) for item in prepared
        ]
        failures = [r for r in results if isinstance(r, VideoIndexError)]
        self._usage.add(embedded_items=len(results) - len(failures), failed_items=len(failures))
        if failures:
            logger.warning(
                "%d of %d inputs failed; first: %s", len(failures), len(results), failures[0]
            )
        return results

    def _genai_client(self) -> genai.Client:
        runtime = self._runtime
        with runtime.lock:
            if runtime.client is None:
                runtime.client = make_client(
                    api_key=self._api_key.get_secret_value(),
                    policy=self.retry_policy(),
                    base_url=self.base_url,
                    purpose=GEMINI_CLASS_NAME,
                )
            return runtime.client

    def _semaphore(self) -> asyncio.Semaphore:
        """The bound on requests in flight, one per event loop."""
        loop = asyncio.get_running_loop()
        semaphores = self._runtime.semaphores
        if loop not in semaphores:
            semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return semaphores[loop]


class _Runtime:
    """Live state behind the settings: the SDK client and the per-loop request bounds.

    Never copied: a pickled or deep-copied model (an IngestionPipeline with
    workers pickles its transformations) starts with a fresh one.
    """

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        self.lock = threading.Lock()
        self.client: genai.Client | None = None
        self.semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self.semaphores = weakref.WeakKeyDictionary()

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._start()


Prepared: TypeAlias = "EmbedInput | VideoIndexError"


def _prepared(make: Callable[[], EmbedInput]) -> Prepared:
    """The input, or the reason it cannot be sent (that item fails, the others go on)."""
    try:
        return make()
    except (EmbeddingError, MediaError) as exc:
        return exc


def _single_vector(results: list[Result]) -> Embedding:
    (result,) = results
    if isinstance(result, VideoIndexError):
        raise result
    return result


def _all_vectors(results: list[Result]) -> list[Embedding]:
    """Every vector, or an error naming how many inputs failed and the first reason."""
    failures = [r for r in results if isinstance(r, VideoIndexError)]
    if not failures:
        return [r for r in results if not isinstance(r, VideoIndexError)]
    first = failures[0]
    if len(results) == 1:
        raise first
    summary = f"{len(failures)} of {len(results)} inputs failed; first: {first}"
    if isinstance(first, RemoteAPIError):
        raise RemoteAPIError(transport.SERVICE, summary, status=first.status) from first
    raise EmbeddingError(summary) from first


def _outcomes(nodes: Sequence[BaseNode], results: list[Result]) -> list[EmbeddingOutcome]:
    outcomes = []
    for node, result in zip(nodes, results, strict=True):
        if isinstance(result, VideoIndexError):
            outcomes.append(EmbeddingOutcome(node.node_id, None, result))
        else:
            node.embedding = result
            outcomes.append(EmbeddingOutcome(node.node_id, result))
    return outcomes


__all__ = [
    "DEFAULT_MODEL",
    "DOCUMENT_TEMPLATE",
    "QUERY_TEMPLATE",
    "EmbeddingOutcome",
    "EmbeddingUsage",
    "GeminiMultimodalEmbedding",
]
