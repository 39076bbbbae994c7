"""Speech recognition by which thread loaded the model, and how CTranslate2's threads wait.

    python benchmarks/transcription_threads.py [--files a.mp4 ...] [--busy 0 1 2]
        [--rounds 2] [--json FILE]

CTranslate2's libgomp reads how its threads wait from the environment once, when it
loads (see :mod:`llama_index_video.transcription.openmp`). Each measurement is therefore
a fresh child process that transcribes the files with ``FasterWhisperTranscriber``'s
defaults, the model loaded either by the thread that transcribes (``caller``, as the CLI
does) or by another thread (``thread``, as a worker thread of an app does), and waiting:

- ``libgomp default``: faster-whisper imported first, as a script of one's own does
  (and as this package did before it set the waiting), so libgomp keeps its defaults;
- ``brief spinning``: imported by the package, which sets 1,000 spins.

Beside the child, ``--busy N`` processes spin on the CPU (0 = a quiet machine), as other
work on a shared machine would. Reported per case: the median over rounds of the wall and
CPU seconds of the transcription alone (model already loaded, audio already decoded).
The transcripts are compared too: the waiting never changes the words.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ingest_speed import machine  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
DEFAULT_FILES = [EXAMPLES / "ozone_explainer.mp4", EXAMPLES / "checkout_deep_dive.mp4"]
LOADERS = ("caller", "thread")
WAITING = ("libgomp default", "brief spinning")
MAX_ROUNDS = 20
MAX_BUSY = 8
CHILD_TIMEOUT_S = 600
# Keeps a core busy until it is killed, its parent is gone, or its lifetime is over,
# whichever comes first: a benchmark killed outright leaves no process spinning.
BUSY_PROCESS = """
import os, sys, time
parent, deadline = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
while os.getppid() == parent and time.monotonic() < deadline:
    pass
"""


@dataclass(frozen=True)
class Transcribed:
    """One child's transcription: its wall and CPU seconds, and the words it heard."""

    wall_s: float
    cpu_s: float
    words: str


@dataclass(frozen=True)
class Case:
    """One case's medians over the rounds."""

    busy: int
    loader: str
    waiting: str
    wall_s: float
    cpu_s: float


def child(files: Sequence[Path], loader: str, waiting: str) -> Transcribed:
    """Transcribe ``files`` in this process."""
    if waiting == "libgomp default":
        import faster_whisper  # noqa: F401

    import numpy as np

    from llama_index_video.media.audio import decode_audio
    from llama_index_video.transcription import FasterWhisperTranscriber

    audios = [decode_audio(path) for path in files]
    transcriber = FasterWhisperTranscriber()

    def load() -> None:
        list(transcriber.transcribe(np.zeros(16_000, dtype=np.float32)).segments)

    if loader == "thread":
        worker = threading.Thread(target=load)
        worker.start()
        worker.join()
    else:
        load()
    started, cpu_started = time.perf_counter(), time.process_time()
    words = [
        segment.text
        for audio, path in zip(audios, files, strict=True)
        for segment in transcriber.transcribe(audio, source=path).segments
    ]
    return Transcribed(
        wall_s=time.perf_counter() - started,
        cpu_s=time.process_time() - cpu_started,
        words=" ".join(words),
    )


def measure(files: Sequence[Path], loader: str, waiting: str) -> Transcribed:
    command = [sys.executable, __file__, "--child", loader, waiting, "--files", *map(str, files)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{loader} / {waiting} failed:\n{done.stderr}")
    return Transcribed(**json.loads(done.stdout.splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--busy", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--rounds", type=int, default=2, help=f"rounds (1-{MAX_ROUNDS})")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", nargs=2, metavar=("LOADER", "WAITING"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    files = [path.resolve() for path in args.files]
    if args.child:
        print(json.dumps(asdict(child(files, *args.child))))
        return 0
    if not 1 <= args.rounds <= MAX_ROUNDS:
        parser.error(f"--rounds must be within 1..{MAX_ROUNDS}")
    if not all(0 <= busy <= MAX_BUSY for busy in args.busy):
        parser.error(f"--busy counts must be within 0..{MAX_BUSY}")
    print(f"machine: {machine()}")
    print(f"files: {', '.join(path.name for path in files)}; rounds: {args.rounds}")
    cases = [(loader, waiting) for loader in LOADERS for waiting in WAITING]
    results: list[Case] = []
    transcripts = set()
    for busy in args.busy:
        lifetime = args.rounds * len(cases) * CHILD_TIMEOUT_S
        spinners = [
            subprocess.Popen([sys.executable, "-c", BUSY_PROCESS, str(os.getpid()), str(lifetime)])
            for _ in range(busy)
        ]
        try:
            runs: dict[tuple[str, str], list[Transcribed]] = {case: [] for case in cases}
            for round_ in range(args.rounds):
                for case in cases if round_ % 2 == 0 else cases[::-1]:
                    transcribed = measure(files, *case)
                    transcripts.add(transcribed.words)
                    runs[case].append(transcribed)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        for (loader, waiting), done in runs.items():
            wall = statistics.median(r.wall_s for r in done)
            cpu = statistics.median(r.cpu_s for r in done)
            results.append(Case(busy, loader, waiting, wall, cpu))
    print(f"{'busy':>4} {'model loaded by':16} {'waiting':16} {'wall s':>7} {'CPU s':>7}")
    for r in results:
        print(f"{r.busy:>4} {r.loader:16} {r.waiting:16} {r.wall_s:7.2f} {r.cpu_s:7.2f}")
    print(f"distinct transcripts across all runs: {len(transcripts)}")
    if args.json:
        figures = {
            "machine": machine(),
            "results": [asdict(r) for r in results],
            "transcripts": sorted(transcripts),
        }
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
