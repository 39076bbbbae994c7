"""Ingest on a Ray cluster: files are read and embedded by actors that keep their models.

Each actor (one CPU) unpickles the reader and embedding model once and keeps the speech,
OCR and embedding models loaded from one file to the next. The driver gives each actor at
most :data:`JOBS_IN_FLIGHT_PER_WORKER` tasks at a time, the least busy first, the earliest
file's work first; it keeps at most :data:`LOOKAHEAD_PER_WORKER` files per actor under
way ahead of the file it is writing (so memory stays bounded however many files there
are), and takes results in input order.

A recording longer than the reader's ``audio_chunk_seconds`` (10 minutes) that will be
transcribed is split so it does not sit on one worker: the driver decodes its audio (16 kHz
mono, seconds per hour of media) chunk by chunk, cut at the quiet moments a local read
cuts at (``VideoReader.speech_chunks``), and sends each chunk's samples to a free actor to
transcribe; once every chunk is back, their speech is joined on the source timeline and
one actor reads the file with it (frames, OCR, units, embedding). A local read transcribes
the same chunks one after another, so the rows are the same. At most
``JOBS_IN_FLIGHT_PER_WORKER`` chunks per actor are decoded and in flight at a time (a
10-minute chunk is 38 MB of samples).

Frames and clips travel back to the driver as bytes. A worker reads into a scratch
folder of its own, the node paths are rewritten to the index's media folder, and the
driver writes the bytes there just before it writes the nodes. So workers need no
shared storage for the index (only the input files must be readable at the same path,
e.g. a shared mount), and a worker that dies mid-file leaves nothing in the index: Ray
restarts the actor and runs the file again (``max_retries`` times), and node ids and
frame names derive from the file's content, so the retry gives the same rows. The cost
is measured in docs/benchmarks.md (a frame JPEG is ~20-60 KB; an hour of video with a
frame every few seconds returns tens of MB).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Generator, Iterator, Sequence
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import MissingDependencyError, VideoIndexError
from llama_index_video.executor.base import (
    FileJob,
    FileProgress,
    Heard,
    Produced,
    Producer,
    produce,
    recognise,
)
from llama_index_video.reader.nodes import with_media_paths
from llama_index_video.transcription.base import Speech

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode

    from llama_index_video.media.audio import AudioChunk
    from llama_index_video.reader.video_reader import VideoReader

logger = logging.getLogger(__name__)

JOBS_IN_FLIGHT_PER_WORKER = 2
LOOKAHEAD_PER_WORKER = 4
DEFAULT_MAX_RETRIES = 3


class RayExecutor:
    """Read files on a Ray cluster.

    Args:
        address: The cluster (``"auto"``, ``"ray://host:10001"``, ``"127.0.0.1:6379"``);
            None: Ray's default (``$RAY_ADDRESS``, else a cluster on this machine,
            else a new local one). Ignored when this process already joined one.
        workers: Actors to start (each takes one CPU); None: one per CPU in the cluster.
        max_retries: How often a file is run again after its worker died.
    """

    remote = True

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.address = address
        self.workers = workers
        self.max_retries = max_retries

    def run(
        self, producer: Producer, jobs: Sequence[FileJob], progress: FileProgress
    ) -> Generator[Produced, None, None]:
        """Yield each job's result in order; a file whose worker kept dying fails alone."""
        if not jobs:
            return
        ray = _ray()
        joined = not ray.is_initialized()
        if joined:
            ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
        actor_class = ray.remote(num_cpus=1)(_ProducerActor).options(
            max_restarts=self.max_retries, max_task_retries=self.max_retries
        )
        count, files = self._plan(ray, jobs, producer.reader)
        shared = ray.put(producer)
        actors = [actor_class.remote(shared, os.getcwd()) for _ in range(count)]
        try:
            for job, outcome in _Schedule(ray, actors, jobs, files):
                if isinstance(outcome, Produced):
                    yield outcome
                else:
                    yield self._result(ray, job, outcome, progress)
        finally:
            for actor in actors:
                ray.kill(actor)
            if joined:
                ray.shutdown()

    def _plan(
        self, ray: Any, jobs: Sequence[FileJob], reader: VideoReader
    ) -> tuple[int, Iterator[_File]]:
        """How many actors to start, and each job's :class:`_File` (probed as it is taken).

        One actor per CPU (or ``workers``); fewer for fewer files, unless one will be
        split: those few files are probed now, and only now.
        """
        wanted = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        files = (_File(job, reader.speech_chunks(job.path)) for job in jobs)
        if len(jobs) >= wanted:
            return wanted, files
        planned = list(files)
        split = any(file.chunks is not None for file in planned)
        return (wanted if split else len(jobs)), iter(planned)

    @staticmethod
    def _result(ray: Any, job: FileJob, ref: Any, progress: FileProgress) -> Produced:
        try:
            produced: Produced = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died more than max_retries times
            return Produced(job, None, _worker_lost(exc))
        progress(job.path, "read", 1, 1)
        return produced


def _worker_lost(exc: Exception) -> VideoIndexError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return VideoIndexError(f"Ray worker lost ({type(exc).__name__}: {reason})")


@dataclass
class _File:
    """One file under way: the chunks of its audio still to send, then the file itself."""

    job: FileJob
    chunks: Iterator[AudioChunk] | None
    """Decoded one at a time as they are sent; None once all are (or it is not split)."""
    heard: list[Any] = field(default_factory=list)
    """Refs of the sent chunks' :class:`Heard`, in chunk order."""
    result: Any = None
    """Ref of its :class:`Produced`, once sent to be read."""
    failed: Produced | None = None
    """Its outcome when a chunk failed (the file is then not read)."""


_Task = tuple[str, tuple[Any, ...], Callable[[Any], None]]
"""An actor method's name, its arguments, and what to do with the ref it returns."""


class _Schedule:
    """Each job with its finished result (a ref of its :class:`Produced`, or the Produced).

    A task goes to the least busy actor with fewer than ``JOBS_IN_FLIGHT_PER_WORKER``
    unfinished, the earliest file's next task first; results finished ahead of the next
    one to write wait in Ray's object store, at most ``LOOKAHEAD_PER_WORKER`` files per
    actor.
    """

    def __init__(
        self, ray: Any, actors: list[Any], jobs: Sequence[FileJob], files: Iterator[_File]
    ) -> None:
        self._ray = ray
        self._actors = actors
        self._jobs = jobs
        self._unplanned = files  # the jobs' files, in the same order
        self._files: dict[int, _File] = {}  # planned, not yet handed out; in input order
        self._unfinished: dict[Any, int] = {}  # ref -> actor index
        self._load = [0] * len(actors)
        self._planned = 0

    def __iter__(self) -> Iterator[tuple[FileJob, Any]]:
        try:
            for position, job in enumerate(self._jobs):
                self._fill()
                while position not in self._files or not self._settled(self._files[position]):
                    # Each wait finishes at least one of finitely many tasks: ends by construction.
                    if not self._unfinished:
                        raise RuntimeError(f"Ray ingest stalled on {job.path}")  # a bug if seen
                    ready, _ = self._ray.wait(list(self._unfinished), num_returns=1)
                    for ref in ready:
                        self._load[self._unfinished.pop(ref)] -= 1
                    self._fill()
                file = self._files.pop(position)
                yield job, file.failed or file.result
        finally:
            for file in self._files.values():  # close the audio still being decoded
                if file.chunks is not None and hasattr(file.chunks, "close"):
                    file.chunks.close()

    def _settled(self, file: _File) -> bool:
        if file.failed is not None:
            return True
        return file.result is not None and file.result not in self._unfinished

    def _fill(self) -> None:
        """Send tasks while some actor has room and some file has a task ready."""
        while True:
            actor = min(range(len(self._actors)), key=self._load.__getitem__)
            if self._load[actor] >= JOBS_IN_FLIGHT_PER_WORKER:
                return
            task = self._next_task()
            if task is None:
                return
            method, args, sent = task
            ref = getattr(self._actors[actor], method).remote(*args)
            self._unfinished[ref] = actor
            self._load[actor] += 1
            sent(ref)

    def _next_task(self) -> _Task | None:
        for file in self._files.values():
            task = self._task_of(file)
            if task is not None:
                return task
        if self._planned == len(self._jobs):
            return None
        if len(self._files) >= len(self._actors) * LOOKAHEAD_PER_WORKER:
            return None
        file = self._files[self._planned] = next(self._unplanned)
        self._planned += 1
        return self._task_of(file)

    def _task_of(self, file: _File) -> _Task | None:
        """The file's next task: its next chunk, else (all heard) reading it; None: wait."""
        if file.result is not None or file.failed is not None:
            return None
        if file.chunks is not None:
            chunk = self._next_chunk(file)
            if chunk is not None:
                return "recognise", (file.job, chunk), file.heard.append
            file.chunks = None
        if any(ref in self._unfinished for ref in file.heard):
            return None
        speech = self._speech(file)
        if file.failed is not None:
            return None

        def read(ref: Any) -> None:
            file.result = ref

        return "produce", (file.job, speech), read

    def _next_chunk(self, file: _File) -> AudioChunk | None:
        assert file.chunks is not None
        try:
            return next(file.chunks, None)
        except Exception as exc:  # a worker reads it whole and says why, as locally
            logger.info("%s: not split (%s: %s)", file.job.path, type(exc).__name__, exc)
            file.heard = []
            return None

    def _speech(self, file: _File) -> Speech | None:
        """The file's chunks' speech joined; None when it was not split or a chunk failed."""
        if not file.heard:
            return None
        try:
            heard: list[Heard] = self._ray.get(file.heard)
        except self._ray.exceptions.RayError as exc:  # its worker died max_retries times
            file.failed = Produced(file.job, None, _worker_lost(exc))
            return None
        for part in heard:
            if part.error is not None:
                file.failed = Produced(file.job, None, part.error)
                return None
        workers = {part.worker for part in heard}
        logger.info(
            "%s: %d chunks transcribed on %d worker(s)", file.job.path, len(heard), len(workers)
        )
        return Speech.joined(part.speech for part in heard if part.speech is not None)


class _ProducerActor:
    """Holds the producer, so the models it loads stay loaded between files."""

    def __init__(self, producer: Producer, cwd: str) -> None:
        if Path(cwd).is_dir():  # relative input paths mean what they meant on the driver
            os.chdir(cwd)
        self._producer = producer
        self._media_dir = str(producer.reader.media_dir)

    def recognise(self, job: FileJob, chunk: AudioChunk) -> Heard:
        heard = recognise(self._producer, job, chunk)
        # Library exceptions may not unpickle on the driver; the message does.
        error = None if heard.error is None else VideoIndexError(str(heard.error))
        return Heard(heard.speech, error, worker=f"{socket.gethostname()}:{os.getpid()}")

    def produce(self, job: FileJob, speech: Speech | None = None) -> Produced:
        scratch = tempfile.mkdtemp(prefix="llama-index-video-")
        try:
            reader = copy(self._producer.reader)
            reader.media_dir = Path(scratch)
            produced = produce(
                Producer(reader, self._producer.embed_model, self._producer.batch_size),
                job,
                speech=speech,
            )
            if produced.result is None:
                # Library exceptions may not unpickle on the driver; the message does.
                error = VideoIndexError(str(produced.error))
                return Produced(job, None, error)
            _relocate(produced.result.nodes, scratch, self._media_dir)
            media = {
                str(path.relative_to(scratch)): path.read_bytes()
                for path in sorted(Path(scratch).rglob("*"))
                if path.is_file()
            }
            return Produced(job, produced.result, media=media)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _relocate(nodes: list[BaseNode], scratch: str, media_dir: str) -> None:
    """Point the nodes' media paths from the worker's scratch folder to the index's."""

    def moved(path: str) -> str:
        return media_dir + path[len(scratch) :] if path.startswith(scratch) else path

    nodes[:] = [with_media_paths(node, moved) for node in nodes]


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray", "Ingest on a Ray cluster") from exc
    return ray
