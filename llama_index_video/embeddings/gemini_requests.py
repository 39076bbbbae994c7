"""The embedding requests themselves: direct calls, Batch API jobs, uploads around them.

:class:`Requests` turns groups of :class:`~.gemini_inputs.EmbedInput` into
protocols (see :mod:`llama_index_video._gemini.transport`) that return one result per input: a
unit-length vector, or the error that input met. One input failing never fails
the others: a request the API rejects as invalid (400) is re-sent input by input
to find the bad one; an upload that fails fails only its own input.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import numpy as np

from llama_index_video._gemini import transport
from llama_index_video.embeddings.gemini_inputs import (
    MAX_ITEMS_PER_REQUEST,
    EmbedInput,
    pack,
)
from llama_index_video.errors import EmbeddingError, RemoteAPIError, VideoIndexError

if TYPE_CHECKING:
    from google.genai import types

logger = logging.getLogger(__name__)

Result: TypeAlias = "list[float] | VideoIndexError"
Protocol: TypeAlias = "transport.Steps[list[Result]]"
Body: TypeAlias = "Callable[[list[EmbedInput], list[types.Content]], Protocol]"

_JOB_SUCCEEDED: Final = ("JOB_STATE_SUCCEEDED", "JOB_STATE_PARTIALLY_SUCCEEDED")


@dataclass(frozen=True)
class EmbeddingUsage:
    """Counts since the model was created (or its usage was reset).

    Attributes:
        requests: Successful ``batchEmbedContents`` calls.
        batch_jobs: Batch API jobs that finished.
        embedded_items: Inputs that got a vector.
        failed_items: Inputs that did not (see the per-node outcomes for why).
        uploaded_files: Media sent through the Files API.
        prompt_tokens: Input tokens as the API reports them (``usageMetadata``, or
            per item for batch jobs); 0 where it reports none.
        tokens_by_modality: ``prompt_tokens`` split by modality (``TEXT``,
            ``IMAGE``, ``VIDEO``, ``AUDIO``, ``DOCUMENT``) where reported.
    """

    requests: int = 0
    batch_jobs: int = 0
    embedded_items: int = 0
    failed_items: int = 0
    uploaded_files: int = 0
    prompt_tokens: int = 0
    tokens_by_modality: dict[str, int] = field(default_factory=dict)


class UsageCounter:
    """Thread-safe running totals behind :class:`EmbeddingUsage`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._modalities: dict[str, int] = {}

    def add(self, modalities: dict[str, int] | None = None, **counts: int) -> None:
        """Add to the totals (``modalities``: tokens per modality)."""
        with self._lock:
            for name, value in counts.items():
                self._counts[name] = self._counts.get(name, 0) + value
            for name, value in (modalities or {}).items():
                self._modalities[name] = self._modalities.get(name, 0) + value

    def snapshot(self) -> EmbeddingUsage:
        """The totals now."""
        with self._lock:
            return EmbeddingUsage(**self._counts, tokens_by_modality=dict(self._modalities))

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"_counts": dict(self._counts), "_modalities": dict(self._modalities)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


@dataclass(frozen=True)
class Requests:
    """Request protocols for one model configuration (built per call from the settings)."""

    model: str
    dimension: int
    policy: transport.RetryPolicy
    batch_size: int
    max_inline_bytes: int
    file_poll_interval: float
    file_ready_timeout: float
    batch_poll_interval: float
    batch_timeout: float
    usage: UsageCounter

    def protocols(self, inputs: Sequence[EmbedInput], *, batch: bool) -> list[Protocol]:
        """One protocol per ``batchEmbedContents`` call (or per Batch API job)."""
        groups = pack(
            inputs,
            max_items=self.batch_size if batch else min(self.batch_size, MAX_ITEMS_PER_REQUEST),
            max_bytes=self.max_inline_bytes,
            per_request_limits=not batch,
        )
        body = self._batch_job if batch else self._embed_request
        return [self._with_uploads([inputs[i] for i in group], body) for group in groups]

    def _with_uploads(self, items: list[EmbedInput], body: Body) -> Protocol:
        """Upload what is too large to send inline, run ``body``, then delete the uploads."""
        results: list[Result | None] = [None] * len(items)
        contents: dict[int, types.Content] = {}
        uploaded: list[str] = []
        closing = False
        try:
            for index, item in enumerate(items):
                try:
                    if item.needs_upload(self.max_inline_bytes):
                        file = yield from self._upload(item)
                        uploaded.append(file.name or "")
                        contents[index] = item.content(file)
                    else:
                        contents[index] = item.content()
                except Exception as exc:
                    results[index] = self._failure(exc, what=f"upload of {item.label}")
            order = sorted(contents)
            if order:
                answers = yield from body([items[i] for i in order], [contents[i] for i in order])
                for index, answer in zip(order, answers, strict=True):
                    results[index] = answer
        except GeneratorExit:
            closing = True  # cancelled: uploads expire on their own after 48 h
            raise
        finally:
            if not closing:
                for name in uploaded:
                    yield from transport.delete(self.policy, name)
        return [r if r is not None else EmbeddingError("input was not sent") for r in results]

    def _upload(self, item: EmbedInput) -> transport.Steps[types.File]:
        file: types.File = yield from transport.upload(
            self.policy,
            item.path if item.path is not None else item.data or b"",
            mimetype=item.mimetype or "",
            display_name=item.label,
            poll_interval=self.file_poll_interval,
            ready_timeout=self.file_ready_timeout,
        )
        self.usage.add(uploaded_files=1)
        return file

    def _embed_request(self, items: list[EmbedInput], contents: list[types.Content]) -> Protocol:
        """One ``batchEmbedContents`` call: one content, so one vector, per input."""
        from google.genai import types

        try:
            response = yield from transport.call(
                self.policy,
                "models.embed_content",
                model=self.model,
                contents=contents,
                config=types.EmbedContentConfig(output_dimensionality=self.dimension),
            )
        except Exception as exc:
            if len(items) > 1 and _rejects_an_input(exc):
                # One bad input rejects the whole request: send them one by one to find it.
                logger.info("a request of %d inputs was rejected (400); sending singly", len(items))
                results: list[Result] = []
                for item, content in zip(items, contents, strict=True):
                    results.extend((yield from self._embed_request([item], [content])))
                return results
            return [self._failure(exc, what=_what(items))] * len(items)
        self.usage.add(requests=1, **_token_counts(response.usage_metadata))
        values = [embedding.values for embedding in response.embeddings or []]
        if len(values) != len(items):
            error = EmbeddingError(f"{self.model} returned {len(values)} vectors for {len(items)}")
            return [error] * len(items)
        return [self._vector(v, item) for v, item in zip(values, items, strict=True)]

    def _batch_job(self, items: list[EmbedInput], contents: list[types.Content]) -> Protocol:
        """One Batch API job for all ``contents``; an item's error stays that item's."""
        from google.genai import types

        config = types.EmbedContentConfig(output_dimensionality=self.dimension)
        src = types.EmbeddingsBatchJobSource(
            inlined_requests=types.EmbedContentBatch(contents=contents, config=config)
        )
        try:
            job = yield from transport.batch_job(
                self.policy,
                model=self.model,
                src=src,
                display_name=f"llama-index-video: {len(items)} inputs",
                poll_interval=self.batch_poll_interval,
                timeout=self.batch_timeout,
            )
        except Exception as exc:
            return [self._failure(exc, what=f"batch job for {_what(items)}")] * len(items)
        self.usage.add(batch_jobs=1)
        return self._job_results(job, items)

    def _job_results(self, job: types.BatchJob, items: list[EmbedInput]) -> list[Result]:
        state = str(job.state.value) if job.state else "no state"
        dest = job.dest
        # When every item failed the SDK cannot tell the answers are embeddings.
        answers: Sequence[Any] | None = None
        if dest is not None:
            answers = dest.inlined_embed_content_responses or dest.inlined_responses
        if state not in _JOB_SUCCEEDED or answers is None or len(answers) != len(items):
            count = len(answers) if answers is not None else 0
            error = RemoteAPIError(
                transport.SERVICE,
                f"batch job {job.name} ended {state} with {count} of {len(items)} answers; "
                "the next ingest retries these inputs",
            )
            return [error] * len(items)
        results: list[Result] = []
        for item, answer in zip(items, answers, strict=True):
            response: Any = answer.response
            embedding = getattr(response, "embedding", None)
            if answer.error is not None or embedding is None:
                error = answer.error
                message = f"{error.message} (code {error.code})" if error else "no embedding"
                reason = f"batch job {job.name}: {item.label} failed: {message}"
                results.append(RemoteAPIError(transport.SERVICE, reason))
                continue
            self.usage.add(prompt_tokens=getattr(response, "token_count", None) or 0)
            results.append(self._vector(embedding.values, item))
        return results

    def _vector(self, values: list[float] | None, item: EmbedInput) -> Result:
        """The model's vector, checked for length and L2-normalised."""
        vector = np.asarray(values or [], dtype=np.float64)
        if vector.size != self.dimension:
            return EmbeddingError(
                f"{self.model} returned {vector.size} values for {item.label}, "
                f"expected output_dimensionality={self.dimension}"
            )
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0.0:
            return EmbeddingError(f"{self.model} returned a zero vector for {item.label}")
        normalised: list[float] = (vector / norm).tolist()
        return normalised

    def _failure(self, exc: Exception, *, what: str) -> VideoIndexError:
        """An input's failure as the package's error; anything else is a bug and propagates."""
        if isinstance(exc, VideoIndexError):
            return exc
        if not transport.is_failure(exc):
            raise exc
        return transport.remote_error(exc, what=what)


def _rejects_an_input(exc: Exception) -> bool:
    """A 400 about the request's content (not the API key, which every retry would repeat)."""
    if getattr(exc, "code", None) != 400:
        return False
    return not transport.blames_the_key(exc)


def _what(items: Sequence[EmbedInput]) -> str:
    return items[0].label if len(items) == 1 else f"{len(items)} inputs ({items[0].label}, ...)"


def _token_counts(usage: types.UsageMetadata | None) -> dict[str, Any]:
    if usage is None:
        return {}
    modalities = {
        str(detail.modality.value if detail.modality else "UNSPECIFIED"): detail.token_count or 0
        for detail in usage.prompt_tokens_details or []
    }
    return {"prompt_tokens": usage.prompt_token_count or 0, "modalities": modalities}
