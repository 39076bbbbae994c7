"""Ingest on a Ray cluster: files are read and embedded by actors that keep their models.

Each actor (one CPU) unpickles the reader and embedding model once and keeps the speech,
OCR and embedding models loaded from one file to the next. The driver gives each actor at
most :data:`JOBS_IN_FLIGHT_PER_WORKER` files at a time, the least busy first, keeps at
most :data:`LOOKAHEAD_PER_WORKER` results per actor ahead of the file it is writing (so
memory stays bounded however many files there are), and takes results in input order.

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

import os
import shutil
import tempfile
from collections.abc import Generator, Iterator, Sequence
from copy import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import MissingDependencyError, VideoIndexError
from llama_index_video.executor.base import FileJob, FileProgress, Produced, Producer, produce

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode

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
        count = min(len(jobs), self.workers or max(1, int(ray.cluster_resources().get("CPU", 1))))
        shared = ray.put(producer)
        actors = [actor_class.remote(shared, os.getcwd()) for _ in range(count)]
        try:
            for job, ref in _in_order(ray, actors, jobs):
                yield self._result(ray, job, ref, progress)
        finally:
            for actor in actors:
                ray.kill(actor)
            if joined:
                ray.shutdown()

    @staticmethod
    def _result(ray: Any, job: FileJob, ref: Any, progress: FileProgress) -> Produced:
        try:
            produced: Produced = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died more than max_retries times
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return Produced(
                job, None, VideoIndexError(f"Ray worker lost ({type(exc).__name__}: {reason})")
            )
        progress(job.path, "read", 1, 1)
        return produced


def _in_order(
    ray: Any, actors: list[Any], jobs: Sequence[FileJob]
) -> Iterator[tuple[FileJob, Any]]:
    """Each job with its finished result ref, in job order.

    A job goes to the least busy actor with fewer than ``JOBS_IN_FLIGHT_PER_WORKER``
    unfinished; results finished ahead of the next one to write wait in Ray's object
    store, at most ``LOOKAHEAD_PER_WORKER`` per actor.
    """
    refs: dict[int, Any] = {}  # submitted, not yet handed out
    unfinished: dict[Any, int] = {}  # ref -> actor index
    load = [0] * len(actors)
    submitted = 0

    def fill() -> None:
        nonlocal submitted
        while submitted < len(jobs) and len(refs) < len(actors) * LOOKAHEAD_PER_WORKER:
            actor = min(range(len(actors)), key=load.__getitem__)
            if load[actor] >= JOBS_IN_FLIGHT_PER_WORKER:
                return
            ref = actors[actor].produce.remote(jobs[submitted])
            refs[submitted], unfinished[ref] = ref, actor
            load[actor] += 1
            submitted += 1

    for position, job in enumerate(jobs):
        fill()
        head = refs.pop(position)
        while head in unfinished:  # each wait finishes at least one ref: ends by construction
            ready, _ = ray.wait(list(unfinished), num_returns=1)
            for ref in ready:
                load[unfinished.pop(ref)] -= 1
            fill()
        yield job, head


class _ProducerActor:
    """Holds the producer, so the models it loads stay loaded between files."""

    def __init__(self, producer: Producer, cwd: str) -> None:
        if Path(cwd).is_dir():  # relative input paths mean what they meant on the driver
            os.chdir(cwd)
        self._producer = producer
        self._media_dir = str(producer.reader.media_dir)

    def produce(self, job: FileJob) -> Produced:
        scratch = tempfile.mkdtemp(prefix="llama-index-video-")
        try:
            reader = copy(self._producer.reader)
            reader.media_dir = Path(scratch)
            produced = produce(
                Producer(reader, self._producer.embed_model, self._producer.batch_size), job
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


def _relocate(nodes: Sequence[BaseNode], scratch: str, media_dir: str) -> None:
    """Point the nodes' media paths from the worker's scratch folder to the index's."""

    def moved(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(scratch):
            return media_dir + value[len(scratch) :]
        return value

    for node in nodes:
        node.metadata = {key: moved(value) for key, value in node.metadata.items()}
        if getattr(node, "image_path", None):
            node.image_path = moved(node.image_path)  # type: ignore[attr-defined]
        for name in ("image_resource", "audio_resource", "video_resource"):
            resource = getattr(node, name, None)
            if resource is not None and resource.path is not None:
                resource.path = Path(moved(str(resource.path)))


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("ray", "ray", "Ingest on a Ray cluster") from exc
    return ray
