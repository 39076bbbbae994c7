"""What speaker labelling costs in memory on a long recording: CAM++ in batches or not.

    python benchmarks/diarization_memory.py                   # benchmarks/long_real/lj_reader.opus
    python benchmarks/diarization_memory.py --audio talk.flac

The default diarizer (``CampplusDiarizer``, count estimated) labels the recording in a
child process per setting, and the child's peak resident memory, CPU seconds and wall
time are printed: with ``BATCH_WINDOWS`` as shipped, and as the baseline in the same run
with every window of an audio chunk (up to 10 minutes, some 1,100 windows of 1 s) in
one call of the model, as before. Both must give the same turns. The default recording
is real speech, one reader (11.9 minutes of LJ Speech clips joined; its source and
licence in the JSON beside it), which is enough: the windows, not the voices, set the
cost.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "benchmarks" / "long_real" / "lj_reader.opus"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audio", type=Path, default=AUDIO)
    args = parser.parse_args()
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
