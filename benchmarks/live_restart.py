"""What ``ingest --live`` saves by going on after a Ctrl-C, against starting again from 0.

A real reading (the LibriVox clip in tests/fixtures/speech, 24.7 s, ``--repeat`` times)
is written into a Matroska file up to ``--stop-at`` seconds; a first
:func:`~llama_index_video.live.ingest_live` is stopped (``stop``, a single Ctrl-C) at its
first chunk and ingests the file so far; the rest is written and a second run follows
the file to its end (``--settle`` 15 s, so it stores every chunk live) and ingests it.
*goes on*: the second run as it is; *from 0*: the same, with the note the stop left
deleted first (how every restart ran before), in the same run and process, each over its
own file and fresh index. Printed per run: where the second run's first chunk started,
the audio it transcribed live, its CPU seconds to its last chunk and with its final
ingest, and whether its rows equal a normal ingest of the finished file.

    python benchmarks/live_restart.py [--repeat 4] [--stop-at 60] [--rounds 2]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import live_latency  # noqa: E402

READING = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
MODES = ("goes on", "from 0")


class PausedWriter:
    """Stands in for ``time`` in :func:`live_latency.write_samples`: it writes at once,
    and waits for ``go`` after ``pause_at`` seconds."""

    def __init__(self, pause_at: int) -> None:
        self.pause_at = pause_at
        self.written = 0
        self.go = threading.Event()

    def sleep(self, seconds: float) -> None:
        self.written += 1
        if self.written == self.pause_at:
            self.go.wait()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rows(index) -> list[tuple[float, float, str]]:
    got = index.vector_store.client.get(include=["metadatas", "documents"])
    return sorted(
        (m["start_s"], m["end_s"], d)
        for m, d in zip(got["metadatas"], got["documents"], strict=True)
    )


def restart(samples: np.ndarray, stop_at: int, mode: str, folder: Path) -> str:
    from llama_index_video.index import VideoIndex
    from llama_index_video.live import ingest_live
    from llama_index_video.store.live import HEAD_BYTES, live_key

    recording = folder / "reading.mkv"
    writer_time = PausedWriter(stop_at)
    live_latency.time = writer_time  # type: ignore[assignment]
    writer = threading.Thread(
        target=live_latency.write_samples, args=(recording, samples, 0.0), daemon=True
    )
    writer.start()
    index = VideoIndex(folder / "index")
    stop = threading.Event()
    options = {"chunk_seconds": 10.0, "max_seconds": 3600.0}
    ingest_live(index, recording, settle=3600.0, stop=stop, report=lambda c: stop.set(), **options)
    stopped = index.library()[0].duration or 0.0
    if mode == "from 0":
        with recording.open("rb") as handle, index._writing(60.0):
            key = live_key(recording, handle.read(HEAD_BYTES))
            index.manifest.forget_meta(f"live-stopped:{key}")
    writer_time.go.set()
    writer.join()
    chunks, live_cpu = [], []
    began = cpu_seconds()

    def stored(chunk) -> None:
        chunks.append(chunk)
        live_cpu.append(cpu_seconds() - began)

    ingest_live(index, recording, settle=15.0, report=stored, **options)
    total_cpu = cpu_seconds() - began
    followed = rows(index)
    index.close()
    normal = VideoIndex(folder / "normal")
    normal.ingest([recording])
    same = followed == rows(normal)
    normal.close()
    heard = sum(c.end - c.start for c in chunks)
    return (
        f"{mode:8} stopped at {stopped:5.1f} s; second run from {chunks[0].start:5.1f} s, "
        f"{heard:5.1f} s heard live, {live_cpu[-1]:5.1f} CPU s to its last chunk, "
        f"{total_cpu:5.1f} with its final ingest; rows = a normal ingest: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4, help="readings in the recording")
    parser.add_argument("--stop-at", type=int, default=60, help="seconds written at the stop")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio

    samples = np.tile(decode_audio(READING), args.repeat)
    print(f"recording {len(samples) / SAMPLE_RATE:.1f} s, written up to {args.stop_at} s")
    for _ in range(args.rounds):
        for mode in MODES:
            with tempfile.TemporaryDirectory(prefix="live-restart-") as folder:
                print(restart(samples, args.stop_at, mode, Path(folder)), flush=True)


if __name__ == "__main__":
    main()
