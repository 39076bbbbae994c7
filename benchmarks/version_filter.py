"""What keeping reads to one version's files costs on an index of thousands of files.

Run from the repository root::

    python benchmarks/version_filter.py [--files 2000] [--sections 3] [--searches 30]

While another process's writer is at work, an app's ``VideoIndex`` reading in place
keeps its vector queries to the files of the version it loaded
(``SearchPolicy.version``: a metadata filter listing every one of them), and reads that
list from the manifest it holds at each search. This builds one index of ``--files``
synthetic Markdown files of ``--sections`` moments each (today's code, ingested in this
process), then times ``--searches`` warm searches (after five warm-up calls), plain and
filtered by modality, first with nobody writing (the baseline, the same index in the
same run), then while another process holds the writer lock (writing nothing), and the
list read alone. Synthetic material; the default local embedding.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.follow_cost import HOLD  # noqa: E402

QUESTION = "how often is valve 12 of pump 7 checked"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the index (10-20000)")
    parser.add_argument("--sections", type=int, default=3, help="moments per file (1-50)")
    parser.add_argument("--searches", type=int, default=30, help="timed calls per case")
    args = parser.parse_args(argv)
    if not 10 <= args.files <= 20_000 or not 1 <= args.sections <= 50:
        parser.error("--files must be within 10..20000 and --sections within 1..50")
    if not 5 <= args.searches <= 10_000:
        parser.error("--searches must be within 5..10000")
    from llama_index_video.index import VideoIndex

    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="version-filter-") as scratch:
        folder = Path(scratch)
        docs = folder / "docs"
        docs.mkdir()
        for n in range(args.files):
            (docs / f"pump_{n:05d}.md").write_text(
                "\n\n".join(
                    f"## Pump {n} valve {v}\n\nValve {v} of pump {n} is checked every "
                    f"{(n + v) % 9 + 1} days."
                    for v in range(args.sections)
                )
            )
        started = time.perf_counter()
        index = VideoIndex(folder / "index")
        report = index.ingest([docs])
        built = time.perf_counter() - started
        if not report.ok:
            raise SystemExit("the ingest failed")
        calls: dict[str, Callable[[], object]] = {
            "search": lambda: index.search(QUESTION),
            "search by modality": lambda: index.search(QUESTION, modalities=["text"]),
        }
        quiet = {name: _timed(call, args.searches) for name, call in calls.items()}
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(folder / "index")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert holder.stdout is not None and holder.stdin is not None
        if holder.stdout.readline().strip() != "held":
            raise SystemExit("the lock holder did not start")
        try:
            writing = {name: _timed(call, args.searches) for name, call in calls.items()}
            listed = _timed(index._version_contents, args.searches)
            kept = len(index._version_contents() or ())
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
        index.close()
    print(
        f"{args.files} files x {args.sections} moments (synthetic), ingested in {built:.0f} s; "
        f"{args.searches} timed calls each, median (p95) ms"
    )
    for name in calls:
        print(
            f"  {name:>20}: nobody writing {quiet[name][0]:7.1f} ({quiet[name][1]:6.1f}), "
            f"another process writing {writing[name][0]:7.1f} ({writing[name][1]:6.1f}) "
            f"x{writing[name][0] / quiet[name][0]:.2f}"
        )
    print(f"  the version's list of {kept} files read alone: {listed[0]:.2f} ({listed[1]:.2f}) ms")
    print(
        f"load {load_before} -> {load_average()}; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    return 0


def _timed(call: Callable[[], object], times: int) -> tuple[float, float]:
    """Median and p95 milliseconds of ``times`` calls, after five warm-up calls."""
    for _ in range(5):
        call()
    taken = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        taken.append((time.perf_counter() - started) * 1000)
    taken.sort()
    return statistics.median(taken), taken[min(len(taken) - 1, int(len(taken) * 0.95))]


if __name__ == "__main__":
    sys.exit(main())
