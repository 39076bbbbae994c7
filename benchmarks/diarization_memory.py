"""What speaker labelling costs in memory: on one long recording, and over several files.

    python benchmarks/diarization_memory.py                   # benchmarks/long_real/lj_reader.opus
    python benchmarks/diarization_memory.py --audio talk.flac
    python benchmarks/diarization_memory.py --audio meeting.wav --files 6 --baseline-ref REF

Without ``--files``, the default diarizer (``CampplusDiarizer``, count estimated) labels
the recording in a child process per setting, and the child's peak resident memory, CPU
seconds and wall time are printed: with ``BATCH_WINDOWS`` as shipped, and as the
baseline in the same run with every window of an audio chunk (up to 10 minutes, some
1,100 windows of 1 s) in one call of the model, as before. Both must give the same
turns. The default recording is real speech, one reader (11.9 minutes of LJ Speech clips
joined; its source and licence in the JSON beside it), which is enough: the windows, not
the voices, set the cost.

With ``--files N``, N copies of the recording, each turned round to start elsewhere (so
every copy is new content), are ingested by one ``llama-index-video ingest`` (and one
``ingest --speakers``) of this checkout and, side by side in the same run, of
``--baseline-ref``'s code. Printed for each: the peak resident memory of the process
tree when the 1st, 2nd, ... file's line is printed (what an ingest of that many files
peaks at), its CPU seconds and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.baseline import Version, load_average, release, today  # noqa: E402

AUDIO = ROOT / "benchmarks" / "long_real" / "lj_reader.opus"
COPIES = ROOT / "benchmarks" / ".cache" / "diarization_memory"
CHILD = """
import json, sys
from pathlib import Path
from llama_index_video.media.audio import iter_audio_chunks
from llama_index_video.speakers import campplus
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
if sys.argv[2] != "shipped":
    campplus.BATCH_WINDOWS = 10**9
path = Path(sys.argv[1])
turns = CampplusDiarizer().diarize(iter_audio_chunks(path), source=path)
print(json.dumps([[round(t.start, 2), round(t.end, 2), t.speaker] for t in turns]))
"""
SAMPLE_EVERY_S = 0.25


def run(audio: Path, setting: str) -> tuple[list[list[object]], float, float, float]:
    """Turns, peak MB, CPU s and wall s of one child labelling ``audio``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(audio), setting],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=1800,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout.splitlines()[-1]), after.ru_maxrss / 1024, cpu, wall


def turned_copies(audio: Path, count: int) -> list[Path]:
    """``count`` 16 kHz WAV copies of ``audio``, copy k starting k/count of the way in and
    going on from the start after the end (made once, under ``benchmarks/.cache``)."""
    duration = float(
        subprocess.run(
            [
                "ffprobe",
                "-v",
                "error",
                "-show_entries",
                "format=duration",
                "-of",
                "csv=p=0",
                str(audio),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    copies = []
    for k in range(count):
        turn = round(duration * k / count, 1)
        copy = COPIES / f"{audio.stem}-from-{turn:.1f}s.wav"
        if not copy.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            halves = f"[0]atrim=start={turn},asetpts=PTS-STARTPTS[a];"
            halves += f"[0]atrim=end={turn},asetpts=PTS-STARTPTS[b];[a][b]concat=n=2:v=0:a=1"
            subprocess.run(
                [
                    "ffmpeg",
                    "-v",
                    "error",
                    "-y",
                    "-i",
                    str(audio),
                    "-filter_complex",
                    halves,
                    "-ar",
                    "16000",
                    "-ac",
                    "1",
                    str(copy),
                ],
                check=True,
            )
        copies.append(copy)
    return copies


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and every process under it, in MiB (0 once it is gone)."""
    total = 0
    waiting = [pid]
    while waiting:
        member = waiting.pop()
        try:
            total += int((Path("/proc") / str(member) / "statm").read_text().split()[1])
            for task in (Path("/proc") / str(member) / "task").iterdir():
                waiting.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:  # exited meanwhile
            continue
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class IngestRun:
    """One ingest's peak after each file (MiB), its CPU and wall seconds."""

    peaks_after_file: list[float] = field(default_factory=list)
    peak_mb: float = 0.0
    cpu_s: float = 0.0
    wall_s: float = 0.0


def ingest_run(version: Version, files: list[Path], *, speakers: bool) -> IngestRun:
    """``ingest`` (``--speakers``) of ``files`` into a new index by ``version``'s CLI."""
    measured = IngestRun()
    with tempfile.TemporaryDirectory(prefix="memory-ingest-") as folder:
        command = version.cli("ingest", *map(str, files), "--index", folder, "--quiet")
        started = time.monotonic()
        child = subprocess.Popen(
            command + (["--speakers"] if speakers else []),
            env=version.env(),
            cwd=version.source,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        finished = threading.Event()

        def sample() -> None:
            while not finished.wait(SAMPLE_EVERY_S):
                measured.peak_mb = max(measured.peak_mb, tree_rss_mb(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith(("indexed", "failed")):
                measured.peak_mb = max(measured.peak_mb, tree_rss_mb(child.pid))
                measured.peaks_after_file.append(measured.peak_mb)
                print(
                    f"  {version.name}: {len(measured.peaks_after_file)} files done at "
                    f"{time.monotonic() - started:.0f} s, peak {measured.peak_mb:.0f} MB",
                    flush=True,
                )
        _, status, usage = os.wait4(child.pid, 0)
        finished.set()
        sampler.join()
        measured.wall_s = time.monotonic() - started
        measured.cpu_s = usage.ru_utime + usage.ru_stime
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{version.name}: {' '.join(command)} failed")
    return measured


def side_by_side(versions: list[Version], files: list[Path], *, speakers: bool) -> None:
    """Each version's ingest of ``files`` at the same time (the same load), printed."""
    runs: dict[str, IngestRun] = {}

    def one(version: Version) -> None:
        runs[version.name] = ingest_run(version, files, speakers=speakers)

    threads = [threading.Thread(target=one, args=(version,)) for version in versions]
    print(f"ingest{' --speakers' if speakers else ''} of {len(files)} files, load {load_average()}")
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    columns = " ".join(f"{k} files".rjust(8) for k in range(1, len(files) + 1))
    print(f"  {'version':<24} peak MB after {columns}   CPU s   wall s")
    for version in versions:
        measured = runs[version.name]
        peaks = " ".join(f"{peak:8.0f}" for peak in measured.peaks_after_file)
        print(
            f"  {version.name:<24}               {peaks} {measured.cpu_s:7.1f} "
            f"{measured.wall_s:8.1f}"
        )
    print(f"  load after: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audio", type=Path, default=AUDIO)
    parser.add_argument("--files", type=int, help="ingest this many copies of the audio")
    parser.add_argument("--baseline-ref", default="main", help="with --files: the code before")
    parser.add_argument(
        "--modes", default="plain,speakers", help="with --files: plain, speakers or both"
    )
    args = parser.parse_args()
    if args.files:
        files = turned_copies(args.audio, args.files)
        versions = [release(args.baseline_ref), today()]
        for mode in args.modes.split(","):
            side_by_side(versions, files, speakers=mode == "speakers")
        return
    # RUSAGE_CHILDREN's peak is the largest child's so far: the smaller setting goes first.
    shipped = run(args.audio, "shipped")
    whole = run(args.audio, "whole")
    print(f"{args.audio.name}: {len(shipped[0])} turns")
    print("setting                              peak MB   CPU s   wall s")
    for name, (_, peak, cpu, wall) in (
        ("windows in batches (shipped)", shipped),
        ("a chunk's windows in one call", whole),
    ):
        print(f"{name:<36} {peak:8.0f} {cpu:7.1f} {wall:8.1f}")
    print("same turns:", shipped[0] == whole[0])


if __name__ == "__main__":
    main()
