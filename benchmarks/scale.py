"""Scale-out figures: local vs Ray ingest, Chroma server inserts, per-stage CPU cost.

    python benchmarks/scale.py [--rows 5000] [--skip-ray]

Measured in one run, so every figure shares the machine's load at the time:

- the example media ingested locally (the baseline), through a Ray cluster with one
  worker, and with two workers (a head and a second node of one CPU each, on this
  machine): wall time (model loading included: a Ray worker loads its own), × real
  time, whether the rows equal the local ones, and the frame bytes workers sent back;
- Chroma inserts: rows/s into a ``chroma run`` server vs the embedded client (baseline);
- CPU seconds per stage (decode, ASR, frames, OCR, embedding) per media hour, the
  input of the scale plan in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from real_servers import chroma_server  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
HOUR = 3600.0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def media_seconds() -> float:
    from llama_index_video.media.probe import probe

    return sum(probe(p).duration for p in EXAMPLES.iterdir() if p.suffix in (".mp4", ".mp3"))


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


def ingest(folder: Path, executor=None) -> tuple[float, dict, int]:
    from llama_index_video.index import VideoIndex

    started = time.perf_counter()
    index = VideoIndex(folder)
    try:
        report = index.ingest([EXAMPLES], executor=executor)
        assert report.ok, report
        wall = time.perf_counter() - started
        frames = sum(p.stat().st_size for p in (folder / "media").rglob("*") if p.is_file())
        return wall, rows_of(index), frames
    finally:
        index.close()


def ray_runs(work: Path, baseline: dict, seconds: float) -> list[str]:
    import ray
    from ray.cluster_utils import Cluster

    from llama_index_video.executor.ray import RayExecutor

    lines = []
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        for workers in (1, 2):
            if workers == 2:
                cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes(timeout=120)
            wall, rows, sent = ingest(work / f"ray{workers}", RayExecutor(workers=workers))
            lines.append(
                f"| Ray, {workers} worker{'s' if workers > 1 else ''} | {wall:.1f} | "
                f"{seconds / wall:.1f}x | {same_rows(rows, baseline)} | {sent / 1e6:.2f} MB |"
            )
    finally:
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
    args = parser.parse_args()
    seconds = media_seconds()
    print(f"# {platform.machine()}, {platform.python_version()}, {seconds:.0f} s of media\n")
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        work = Path(tmp)
        print("| run | wall s | x real time | rows equal the local ones | frames sent |")
        print("|---|---:|---:|---|---:|")
        wall, baseline, _ = ingest(work / "local")
        print(f"| local (baseline) | {wall:.1f} | {seconds / wall:.1f}x | - | - |")
        if not args.skip_ray:
            for line in ray_runs(work, baseline, seconds):
                print(line, flush=True)
        print("\n| Chroma | rows | s | rows/s |\n|---|---:|---:|---:|")
        for line in chroma_inserts(work, args.rows):
            print(line, flush=True)
        print("\n| stage | CPU s | CPU s per media hour |\n|---|---:|---:|")
        for line in stage_costs(work, seconds):
            print(line, flush=True)


if __name__ == "__main__":
    main()
