"""Scale-out figures: local vs Ray ingest, Chroma server inserts, per-stage CPU cost.

    python benchmarks/scale.py [--rows 5000] [--skip-ray] [--ingest-only]
                               [--chunk-seconds 30] [--long-minutes 6] [--only-long]

Measured in one run, so every figure shares the machine's load at the time:

- the example media plus one long recording (the examples' audio repeated to
  ``--long-minutes``), read with ``--chunk-seconds`` audio chunks, ingested locally (the
  baseline), through a Ray cluster with one worker, and with two workers (a head and a
  second node of one CPU each, on this machine), where every file longer than one chunk
  is transcribed chunk by chunk on the workers (and once more with two workers and no
  file split, to show what splitting gains): wall time (model loading included: a Ray
  worker loads its own), × real time, whether the rows equal the local ones, the chunks
  sent, the frame bytes workers sent back, and the load average around the run;
- Chroma inserts: rows/s into a ``chroma run`` server vs the embedded client (baseline);
- CPU seconds per stage (decode, ASR, frames, OCR, embedding) per media hour, the
  input of the scale plan in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from real_servers import chroma_server  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
HOUR = 3600.0
UNSPLIT = 24 * HOUR  # audio chunk seconds no example file reaches


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def media_seconds(media: Path) -> float:
    from llama_index_video.media.probe import probe

    return sum(probe(p).duration for p in media.iterdir() if p.suffix in (".mp4", ".mp3", ".wav"))


def make_media(folder: Path, long_minutes: float, *, only_long: bool = False) -> Path:
    """The example files (unless ``only_long``), plus their audio repeated into one long WAV."""
    import shutil
    import wave

    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio

    folder.mkdir()
    for path in EXAMPLES.iterdir():
        if path.suffix in (".mp4", ".mp3", ".md") and not only_long:
            shutil.copy(path, folder / path.name)
    speech = np.concatenate(
        [decode_audio(p) for p in sorted(EXAMPLES.iterdir()) if p.suffix in (".mp4", ".mp3")]
    )
    samples = np.resize(speech, int(long_minutes * 60 * SAMPLE_RATE))  # repeats it
    with wave.open(str(folder / "long_recording.wav"), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return folder


class ActorCpu:
    """CPU seconds of each Ray actor process (``ray::_ProducerActor``), sampled from /proc.

    The busiest actor's CPU time is the wall time the run would take with a dedicated core
    per worker (a lower bound): on this shared machine wall time mostly measures the load.
    """

    def __init__(self) -> None:
        self.seconds: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ActorCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.2):  # ends with the run
            for entry in Path("/proc").iterdir():
                try:
                    if not entry.name.isdigit() or not (entry / "cmdline").read_bytes().startswith(
                        b"ray::_ProducerActor"
                    ):
                        continue
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                self.seconds[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick

    def summary(self) -> str:
        if not self.seconds:
            return "-"
        return f"{max(self.seconds.values()):.1f} / {sum(self.seconds.values()):.1f}"


class ChunkCount(logging.Handler):
    """Counts the chunks the Ray driver reports as transcribed."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "chunks transcribed on" in message:
            self.chunks += int(message.split(": ")[-1].split()[0])


def rows_of(index) -> dict:
    got = index.vector_store._collection.get(include=["documents", "metadatas", "embeddings"])
    folder = str(index.path)
    return {
        i: (d, {k: v.replace(folder, "") if isinstance(v, str) else v for k, v in m.items()}, e)
        for i, d, m, e in zip(
            got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
        )
    }


def same_rows(a: dict, b: dict) -> str:
    if sorted(a) != sorted(b):
        return f"NO ({len(a)} vs {len(b)} ids)"
    if any(a[i][:2] != b[i][:2] for i in a):
        return "NO (texts or metadata differ)"
    drift = max(float(np.max(np.abs(np.asarray(a[i][2]) - np.asarray(b[i][2])))) for i in a)
    return f"yes, {len(a)} rows (max vector difference {drift:.1e})"


def ingest(folder: Path, media: Path, chunk_seconds: float, executor=None):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    started = time.perf_counter()
    reader = VideoReader(media_dir=folder / "media", audio_chunk_seconds=chunk_seconds)
    index = VideoIndex(folder, reader=reader)
    try:
        report = index.ingest([media], executor=executor)
        assert report.ok, report
        wall = time.perf_counter() - started
        frames = sum(p.stat().st_size for p in (folder / "media").rglob("*") if p.is_file())
        return wall, rows_of(index), frames
    finally:
        index.close()


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def ray_runs(
    work: Path, media: Path, chunk_seconds: float, baseline: dict, seconds: float
) -> list[str]:
    import ray
    from ray.cluster_utils import Cluster

    from llama_index_video.executor.ray import RayExecutor

    lines = []
    counter = ChunkCount()
    logger = logging.getLogger("llama_index_video.executor.ray")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        for workers in (1, 2):
            if workers == 2:
                cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes(timeout=120)
            counter.chunks, before = 0, load()
            with ActorCpu() as cpu:
                wall, rows, sent = ingest(
                    work / f"ray{workers}", media, chunk_seconds, RayExecutor(workers=workers)
                )
            lines.append(
                f"| Ray, {workers} worker{'s' if workers > 1 else ''} | {wall:.1f} | "
                f"{seconds / wall:.2f}x | {cpu.summary()} | {same_rows(rows, baseline)} | "
                f"{counter.chunks} | {sent / 1e6:.2f} MB | {before} / {load()} |"
            )
        # The same two workers with no file split: each file's audio is one chunk.
        counter.chunks, before = 0, load()
        with ActorCpu() as cpu:
            wall, _, sent = ingest(work / "unsplit", media, UNSPLIT, RayExecutor(workers=2))
        lines.append(
            f"| Ray, 2 workers, no file split | {wall:.1f} | {seconds / wall:.2f}x | "
            f"{cpu.summary()} | not compared (other chunks) | {counter.chunks} | "
            f"{sent / 1e6:.2f} MB | {before} / {load()} |"
        )
    finally:
        logger.removeHandler(counter)
        ray.shutdown()
        cluster.shutdown()
    return lines


def chroma_inserts(work: Path, count: int) -> list[str]:
    from llama_index.core.schema import TextNode

    from llama_index_video.store.collection import open_chroma

    rng = np.random.default_rng(0)
    nodes = [
        TextNode(
            id_=f"n{i}",
            text=f"moment {i} " * 20,
            metadata={"source": "talk.mp4", "modality": "transcript", "start": float(i)},
            embedding=[float(x) for x in rng.standard_normal(384)],
        )
        for i in range(count)
    ]
    lines = []
    with chroma_server(work / "server") as url:
        for name, url_or_none in (("embedded (baseline)", None), ("server", url)):
            store = open_chroma(work / "embedded", f"bench-{len(lines)}", url=url_or_none)
            started = time.perf_counter()
            for start in range(0, count, 64):
                store.add(nodes[start : start + 64])
            elapsed = time.perf_counter() - started
            lines.append(f"| {name} | {count} | {elapsed:.1f} | {count / elapsed:.0f} |")
    return lines


def stage_costs(work: Path, seconds: float) -> list[str]:
    from llama_index_video.embeddings.local import local_embedding
    from llama_index_video.media.audio import decode_audio
    from llama_index_video.media.frames import sample_frames
    from llama_index_video.media.probe import probe
    from llama_index_video.ocr import RapidOcrEngine, read_screen_text
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    files = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".mp4", ".mp3"))
    costs: dict[str, float] = {}

    def timed(stage: str, work_fn) -> object:
        before = cpu_seconds()
        out = work_fn()
        costs[stage] = cpu_seconds() - before
        return out

    audio = timed("decode audio", lambda: [decode_audio(p) for p in files])
    transcriber = FasterWhisperTranscriber()
    transcriber.transcribe(audio[0][:16000])  # load the model outside the measurement
    texts = timed(
        "ASR (faster-whisper tiny.en)",
        lambda: [s.text for a in audio for s in transcriber.transcribe(a).segments],
    )
    frames = timed(
        "frames",
        lambda: [
            f
            for p in files
            if probe(p).has_video
            for f in sample_frames(p, out_dir=work / "frames", name_prefix=p.stem)
        ],
    )
    engine = RapidOcrEngine()
    timed("OCR (RapidOCR)", lambda: [read_screen_text(engine, f.path) for f in frames])
    model = local_embedding()
    model.get_text_embedding_batch(["warm up"])
    timed("embedding (all-MiniLM-L6-v2)", lambda: model.get_text_embedding_batch(list(texts)))
    total = sum(costs.values())
    lines = [
        f"| {stage} | {cpu:.2f} | {cpu * HOUR / seconds:.0f} |" for stage, cpu in costs.items()
    ]
    lines.append(f"| **all stages** | {total:.2f} | **{total * HOUR / seconds:.0f}** |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000, help="rows for the insert test")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--ingest-only", action="store_true", help="skip Chroma and stages")
    parser.add_argument("--chunk-seconds", type=float, default=30.0, help="audio chunk length")
    parser.add_argument("--long-minutes", type=float, default=6.0, help="the long recording")
    parser.add_argument("--only-long", action="store_true", help="ingest the long one alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        work = Path(tmp)
        media = make_media(work / "input", args.long_minutes, only_long=args.only_long)
        seconds = media_seconds(media)
        print(
            f"# {platform.machine()}, {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"{seconds:.0f} s of media, {args.chunk_seconds:.0f} s audio chunks\n"
        )
        print(
            "| run | wall s | x real time | CPU s: busiest worker / all | rows equal the local "
            "ones | chunks sent | frames sent | load before / after |"
        )
        print("|---|---:|---:|---:|---|---:|---:|---|")
        before, cpu_before = load(), cpu_seconds()
        wall, baseline, _ = ingest(work / "local", media, args.chunk_seconds)
        print(
            f"| local (baseline) | {wall:.1f} | {seconds / wall:.2f}x | "
            f"{cpu_seconds() - cpu_before:.1f} (this process) | - | - | - | {before} / {load()} |",
            flush=True,
        )
        if not args.skip_ray:
            for line in ray_runs(work, media, args.chunk_seconds, baseline, seconds):
                print(line, flush=True)
        if args.ingest_only:
            return
        print("\n| Chroma | rows | s | rows/s |\n|---|---:|---:|---:|")
        for line in chroma_inserts(work, args.rows):
            print(line, flush=True)
        print("\n| stage | CPU s | CPU s per media hour |\n|---|---:|---:|")
        for line in stage_costs(work, media_seconds(EXAMPLES)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
