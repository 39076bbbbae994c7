"""The synthetic index folder benchmarks/search_latency.py measures: 100 hours (or
``hours``) of synthetic lectures, built the way ``VideoIndex.ingest`` builds one, minus
the media; see that script's docstring for how the nodes and their vectors are made.
"""

from __future__ import annotations

import hashlib
import json
import math
import resource
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import MetadataMode
from PIL import Image

from benchmarks.latency_support import SpeechGenerator, group_sentences
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import Frame
from llama_index_video.reader import moments
from llama_index_video.reader.units import build_units

# The reader's limit on the speech a frame's text quotes (private; used as is).
from llama_index_video.reader.video_reader import _SPOKEN_CHARS_PER_FRAME
from llama_index_video.store.manifest import PathRecord
from llama_index_video.transcription.base import Segment

if TYPE_CHECKING:
    import argparse

    from llama_index.core.schema import BaseNode

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache" / "search_latency"
BUILD_VERSION = 3  # bump when the synthetic index changes shape
INSERT_BATCH = 512
FIDELITY_SAMPLES = 2  # per recording and modality


@dataclass(frozen=True)
class BuildInfo:
    """What was built; written to ``build.json`` once the folder is complete."""

    hours: float
    recordings: int
    transcript_nodes: int
    frame_nodes: int
    sentences: int
    vectors: str  # "pooled" or "exact"
    distinct_sentences_embedded: int
    frame_interval: float
    embed_seconds: float  # pooled: the sentence pool; exact: included in insert_seconds
    insert_seconds: float
    build_seconds: float
    # per modality: mean and minimum cosine(pooled vector, model vector) over a sample
    fidelity: dict[str, dict[str, float]]
    peak_rss_mb: float
    built_at: str


@dataclass(frozen=True)
class Recording:
    """One synthetic recording's nodes, with the sentences each node is made of."""

    path: Path
    content_hash: str
    duration: float
    sentence_count: int
    nodes: list[BaseNode]
    sentences_of: list[list[str]]


def folder_for(
    hours: float,
    *,
    exact: bool,
    frame_interval: float,
    seed: int,
    languages: Sequence[str] = ("en",),
) -> Path:
    vectors = "exact" if exact else "pooled"
    name = f"v{BUILD_VERSION}-{hours:g}h-{vectors}-frames{frame_interval:g}s-seed{seed}"
    return CACHE / (name if tuple(languages) == ("en",) else f"{name}-{'+'.join(languages)}")


def make_recording(
    generator: SpeechGenerator,
    index: int,
    duration: float,
    *,
    folder: Path,
    frame_image: Path,
    frame_interval: float,
    language: str = "en",
) -> Recording:
    """The nodes of one recording, made by the reader's own functions; its units are
    labelled ``language`` (the words stay English: only the label is searched by)."""
    name = f"lecture_{index:03d}.mp4"
    path = folder / "recordings" / name
    path.touch()
    source = moments.SourceFile(path, hashlib.sha256(name.encode()).hexdigest())
    sentences = list(generator.recording(index, duration))
    units = list(build_units(Segment(s.start, s.end, s.text) for s in sentences))
    groups = group_sentences([u.text for u in units], [s.text for s in sentences])
    unit_sentences = [[sentences[i].text for i in group] for group in groups]
    spoken_nodes = moments.transcript_nodes(source, units, language=language, note=None)
    frame_nodes: list[BaseNode] = []
    sentences_of = list(unit_sentences)
    for step in range(math.ceil(duration / frame_interval)):
        start = step * frame_interval
        end = min(start + frame_interval, duration)
        frame = Frame(start, end, frame_image, 320, 180, "interval")
        spoken = moments.spoken_between(units, start, end, _SPOKEN_CHARS_PER_FRAME)
        frame_nodes.append(moments.frame_node(source, frame, spoken=spoken, note=None))
        sentences_of.append(
            [
                text
                for unit, texts in zip(units, unit_sentences, strict=True)
                if unit.start < end and unit.end > start
                for text in texts
            ]
        )
    moments.link_moments(spoken_nodes, frame_nodes)  # as VideoReader does
    nodes = [*spoken_nodes, *frame_nodes]
    return Recording(path, source.content_hash, duration, len(sentences), nodes, sentences_of)


class PooledVectors:
    """Node vectors as normalised sums of model vectors of their sentences."""

    def __init__(self, model: BaseEmbedding, sentences: Sequence[str]) -> None:
        self._model = model
        started = time.perf_counter()
        self._rows = np.asarray(model.get_text_embedding_batch(list(sentences), show_progress=True))
        self.seconds = time.perf_counter() - started
        self._row_of = {text: i for i, text in enumerate(sentences)}
        self.count = len(sentences)

    def assign(self, recording: Recording) -> None:
        unplaced = []
        for node, texts in zip(recording.nodes, recording.sentences_of, strict=True):
            if not texts:  # a frame with nothing said: embed its own text
                unplaced.append(node)
                continue
            vector = self._rows[[self._row_of[t] for t in texts]].sum(axis=0)
            node.embedding = (vector / np.linalg.norm(vector)).tolist()
        if unplaced:
            texts = [n.get_content(metadata_mode=MetadataMode.EMBED) for n in unplaced]
            vectors = self._model.get_text_embedding_batch(texts)
            for node, vector in zip(unplaced, vectors, strict=True):
                node.embedding = vector


def pooling_fidelity(
    model: BaseEmbedding, samples: Sequence[tuple[str, str, list[float]]]
) -> dict[str, dict[str, float]]:
    """Per modality, mean and minimum cosine between pooled and model vectors.

    Args:
        model: The embedding model.
        samples: ``(modality, embedded text, pooled vector)`` of some nodes.
    """
    fidelity: dict[str, dict[str, float]] = {}
    for modality in sorted({m for m, _, _ in samples}):
        chosen = [(text, vector) for m, text, vector in samples if m == modality]
        exact = np.asarray(model.get_text_embedding_batch([t for t, _ in chosen]))
        pooled = np.asarray([v for _, v in chosen])
        found = (exact * pooled).sum(axis=1) / (
            np.linalg.norm(exact, axis=1) * np.linalg.norm(pooled, axis=1)
        )
        fidelity[modality] = {"mean": float(found.mean()), "min": float(found.min())}
    return fidelity


def add_recording(video_index: VideoIndex, recording: Recording) -> None:
    """Insert the nodes and record the file in the manifest, as ``Ingestor`` does."""
    manifest = video_index.manifest
    manifest.set_file(recording.content_hash, "indexing")
    for start in range(0, len(recording.nodes), INSERT_BATCH):
        video_index.index.insert_nodes(recording.nodes[start : start + INSERT_BATCH])
    stat = recording.path.stat()
    record = PathRecord(
        str(recording.path.resolve()),
        str(recording.path),
        recording.content_hash,
        stat.st_size,
        stat.st_mtime_ns,
    )
    with manifest.transaction():
        manifest.set_file(
            recording.content_hash,
            "indexed",
            node_count=len(recording.nodes),
            duration=recording.duration,
        )
        manifest.set_path(record)


def build(
    folder: Path,
    *,
    hours: float,
    exact: bool,
    frame_interval: float,
    seed: int,
    languages: Sequence[str] = ("en",),
) -> BuildInfo:
    """Build the synthetic index folder (see the module docstring) and describe it;
    recording ``i`` is labelled ``languages[i % len(languages)]``."""
    started = time.perf_counter()
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "recordings").mkdir(parents=True)
    (folder / "media").mkdir()
    frame_image = folder / "media" / "frame.jpg"
    Image.new("RGB", (320, 180), (40, 70, 110)).save(frame_image, quality=85)

    count = max(1, math.ceil(hours))
    duration = hours * 3600.0 / count
    generator = SpeechGenerator(seed=seed)
    video_index = VideoIndex(folder)
    model = video_index.embed_model
    pool = None
    if not exact:
        sentences = sorted({s for texts in generator.pool().values() for s in texts})
        print(f"embedding {len(sentences)} distinct sentences ...", flush=True)
        pool = PooledVectors(model, sentences)
    video_index._record_identity()  # what VideoIndex.ingest does first

    totals = {"transcript": 0, "frame": 0, "sentences": 0}
    samples: list[tuple[str, str, list[float]]] = []  # (modality, text, pooled vector)
    insert_started = time.perf_counter()
    for index in range(count):
        recording = make_recording(
            generator,
            index,
            duration,
            folder=folder,
            frame_image=frame_image,
            frame_interval=frame_interval,
            language=languages[index % len(languages)],
        )
        if pool is not None:
            pool.assign(recording)
            for modality in ("transcript", "frame"):
                of_modality = [n for n in recording.nodes if n.metadata["modality"] == modality]
                step = max(1, len(of_modality) // FIDELITY_SAMPLES)
                samples.extend(
                    (modality, n.get_content(MetadataMode.EMBED), list(n.embedding or ()))
                    for n in of_modality[step // 2 :: step][:FIDELITY_SAMPLES]
                )
        add_recording(video_index, recording)
        frames = sum(1 for n in recording.nodes if n.metadata.get("modality") == "frame")
        totals["frame"] += frames
        totals["transcript"] += len(recording.nodes) - frames
        totals["sentences"] += recording.sentence_count
        elapsed = time.perf_counter() - insert_started
        print(f"  recording {index + 1}/{count} indexed ({elapsed:.0f} s)", flush=True)
    insert_seconds = time.perf_counter() - insert_started

    fidelity = pooling_fidelity(model, samples)
    video_index.close()
    info = BuildInfo(
        hours=hours,
        recordings=count,
        transcript_nodes=totals["transcript"],
        frame_nodes=totals["frame"],
        sentences=totals["sentences"],
        vectors="exact" if exact else "pooled",
        distinct_sentences_embedded=pool.count if pool else 0,
        frame_interval=frame_interval,
        embed_seconds=pool.seconds if pool else 0.0,
        insert_seconds=insert_seconds,
        build_seconds=time.perf_counter() - started,
        fidelity=fidelity,
        peak_rss_mb=peak_rss_mb(),
        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    (folder / "build.json").write_text(json.dumps(asdict(info), indent=2))
    return info


def build_flags(args: argparse.Namespace) -> list[str]:
    flags = ["--hours", str(args.hours), "--frame-interval", str(args.frame_interval)]
    flags += ["--seed", str(args.seed)]
    return [*flags, "--exact-embeddings"] if args.exact_embeddings else flags


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
