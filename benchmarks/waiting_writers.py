"""Issue 34's item 2 under load: a writer that waited for the lock, then every stored row
reachable?

One ``ingest`` of a Markdown document of ``--sections`` near-duplicate moments ("## n",
"valve n"); ``--delay`` seconds later a second ``ingest`` of another file into the same
index waits for the lock, then writes. Both at ``nice 10`` beside ``--burners``
CPU-bound processes (the issue's losing runs had both cores busy). Afterwards, in a
fresh process: the rows stored, the rows one full-size vector query reaches (as
:func:`~llama_index_video.store.collection.unreachable_ids` asks); then ``verify``'s exit,
``verify --repair``'s exit and the next ``verify``'s. Synthetic text.

Usage: ``python benchmarks/waiting_writers.py [--runs 3] [--sections 2000] [--delay 6]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "examples" / "media" / "handbook.md"
BURN = "while True:\n    pass\n"
REACH = r"""
import sys
from llama_index_video.store.collection import open_chroma, chroma_collection, unreachable_ids
store = open_chroma(__import__("pathlib").Path(sys.argv[1]) / "chroma", "video_moments")
print(chroma_collection(store).count(), len(unreachable_ids(store) or []))
"""


def cli(*argv: str, cwd: Path, nice: bool = False) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "llama_index_video.cli.main", *argv]
    return subprocess.Popen(
        ["nice", "-n", "10", *command] if nice else command,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = process.communicate()
    return process.returncode, err


def reach(work: Path) -> tuple[int, int]:
    """(rows stored, rows one full vector query misses), as a new process sees them."""
    done = subprocess.run(
        [sys.executable, "-c", REACH, str(work / "idx")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    stored, missed = done.stdout.split()
    return int(stored), int(missed)


def one_run(work: Path, *, sections: int, delay: float) -> str:
    (work / "manual.md").write_text(
        "\n\n".join(f"## {n}\n\nvalve {n}" for n in range(sections)), encoding="utf-8"
    )
    (work / "notes").mkdir()
    (work / "notes" / "handbook.md").write_text(HANDBOOK.read_text(encoding="utf-8"))
    first = cli("ingest", "manual.md", "--index", "idx", "--quiet", cwd=work, nice=True)
    time.sleep(delay)
    second = cli("ingest", "notes", "--index", "idx", "--quiet", cwd=work, nice=True)
    (one, _), (two, said) = finished(first), finished(second)
    warned = "cannot" in said or "unreachable" in said
    stored, missed = reach(work)
    verify = finished(cli("verify", "--index", "idx", cwd=work))[0]
    repair = finished(cli("verify", "--repair", "--index", "idx", cwd=work))[0]
    again = finished(cli("verify", "--index", "idx", cwd=work))[0]
    load = os.getloadavg()[0]
    return (
        f"| {one}, {two} | {'yes' if warned else 'no'} | {stored - missed} of {stored} | "
        f"{verify} | {repair} | {again} | {load:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sections", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=6.0, help="seconds before the second")
    parser.add_argument("--burners", type=int, default=1, help="CPU-bound processes beside")
    args = parser.parse_args()
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(args.burners)]
    started = time.perf_counter()
    try:
        print("| exits | second warned | reachable after | verify | repair | verify | load |")
        print("|---|---|---|---:|---:|---:|---:|", flush=True)
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="waiting-writers-") as scratch:
                print(one_run(Path(scratch), sections=args.sections, delay=args.delay), flush=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f"\n{time.perf_counter() - started:.0f} s, {os.cpu_count()} cores, synthetic text")


if __name__ == "__main__":
    main()
