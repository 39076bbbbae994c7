"""The executor boundary: one file in, its nodes (and, from afar, its media bytes) out.

:func:`produce` is the whole per-file work (decode, transcription, frames, OCR and,
when asked, embedding); an :class:`Executor` maps it over the files to read and yields
one :class:`Produced` per file in the order given, so the driver writes results in
order whatever order they finish in. :class:`LocalExecutor` runs it here, lazily,
exactly as ingest always has.

A long recording can be split first: :func:`recognise` transcribes one of its
``VideoReader.speech_chunks`` (anywhere), and ``produce(..., speech=Speech.joined(...))``
reads the file with that speech, giving the nodes a plain :func:`produce` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.media.heap import release_free_memory

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import BaseNode

    from llama_index_video.media.audio import AudioChunk
    from llama_index_video.reader.video_reader import ReadResult, VideoReader
    from llama_index_video.transcription.base import Speech

FileProgress = Callable[[Path, str, float, float], None]
"""Called as ``progress(path, stage, done, total)``, as ingest's own progress."""


@dataclass(frozen=True)
class FileJob:
    """A file to read, with the content hash the driver computed (its node ids derive from it)."""

    path: Path
    content_hash: str


@dataclass(frozen=True)
class Producer:
    """What every worker needs to turn a file into nodes.

    Attributes:
        reader: Reads a file into nodes; its models load on first use in each worker
            and stay loaded for the next file.
        embed_model: Embed the nodes where they are read, in batches of ``batch_size``
            as the driver would; None leaves embedding to the driver.
        batch_size: Nodes per embedding call (the driver's insert batch).
    """

    reader: VideoReader
    embed_model: BaseEmbedding | None = None
    batch_size: int = 64


@dataclass(frozen=True)
class Produced:
    """One file's nodes, or why it failed; ``media`` holds files to write under the
    index's media folder (relative path -> bytes) when they were made elsewhere."""

    job: FileJob
    result: ReadResult | None
    error: VideoIndexError | None = None
    media: dict[str, bytes] = field(default_factory=dict)

    def unwrap(self) -> ReadResult:
        """The result; raises the file's error if it has none."""
        if self.result is None:
            raise self.error or VideoIndexError(f"{self.job.path}: nothing was read")
        return self.result


class Executor(Protocol):
    """Maps :func:`produce` over files; yields one result per job, in job order."""

    @property
    def remote(self) -> bool:
        """Whether files are read in other processes (nodes then come embedded)."""
        ...

    def run(
        self, producer: Producer, jobs: Sequence[FileJob], progress: FileProgress
    ) -> Generator[Produced, None, None]: ...


class LocalExecutor:
    """Reads each file in this process when the driver asks for it (today's ingest)."""

    remote = False

    def run(
        self, producer: Producer, jobs: Sequence[FileJob], progress: FileProgress
    ) -> Generator[Produced, None, None]:
        for job in jobs:
            yield produce(producer, job, _progress_of(job.path, progress))


def _progress_of(path: Path, progress: FileProgress) -> Callable[[str, float, float], None]:
    return lambda stage, done, total: progress(path, stage, done, total)


@dataclass(frozen=True)
class Heard:
    """What one chunk of a file's audio said, or why it could not be transcribed."""

    speech: Speech | None
    error: VideoIndexError | None = None
    worker: str | None = None
    """Which worker transcribed it (host:pid), for the log."""


def produce(
    producer: Producer,
    job: FileJob,
    progress: Callable[[str, float, float], None] | None = None,
    speech: Speech | None = None,
) -> Produced:
    """Read (and embed, if the producer says so) one file; failures are returned, not raised.

    ``speech``: the file's speech, transcribed beforehand chunk by chunk (:func:`recognise`).
    """
    try:
        result = producer.reader.read(
            job.path, file_hash=job.content_hash, progress=progress, speech=speech
        )
        if producer.embed_model is not None:
            embed_in_batches(result.nodes, producer.embed_model, producer.batch_size)
    except VideoIndexError as exc:
        return Produced(job, None, exc)
    except Exception as exc:  # a backend failing deep inside: one line, never a traceback
        return Produced(job, None, MediaError(job.path, f"{type(exc).__name__}: {exc}"))
    finally:  # the next file's peak should not stack on this one's leftovers
        release_free_memory()
    return Produced(job, result)


def recognise(producer: Producer, job: FileJob, chunk: AudioChunk) -> Heard:
    """Transcribe one chunk of ``job``'s audio; a failure is returned, not raised."""
    try:
        return Heard(producer.reader.transcribe_chunk(chunk, source=job.path))
    except VideoIndexError as exc:
        return Heard(None, exc)


def embed_in_batches(nodes: Sequence[BaseNode], embed_model: BaseEmbedding, size: int) -> None:
    """Set each node's embedding, in the batches the driver's inserts would use.

    The same batches give the same padding, so the vectors equal the driver's own.
    """
    from llama_index.core.indices.utils import embed_nodes

    for start in range(0, len(nodes), size):
        batch = nodes[start : start + size]
        vectors = embed_nodes(batch, embed_model)
        for node in batch:
            node.embedding = vectors[node.node_id]
