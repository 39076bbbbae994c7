"""Cold start of the CLI's quick commands, this commit against a baseline (issue 38).

Run from the repository root, in the test virtualenv::

    python benchmarks/cold_start.py [--runs 5] [--baseline-ref REF] [--json FILE]

Each command (``clip``, ``list``, ``remove --help``, ``mcp --print-config``,
``search``) runs as a whole new process, ``--runs`` times per version, the versions
alternating, after one untimed run of each; the figure is the median wall time from
start to exit (:mod:`benchmarks.baseline`). The baseline is the source at
``--baseline-ref`` (default: the commit before ``clip`` read the manifest alone),
exported beside this checkout in the same run. The index (``team_sync.mp3``, a
synthetic voice, and ``handbook.md``) is built once by today's code under
``benchmarks/.cache/cold_start/``; both versions open it. Targets: 1.0 s for the
quick commands, 1.2 s for ``search``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import (  # noqa: E402
    CACHE,
    Version,
    compiled_env,
    load_average,
    release,
    run,
    today,
)

EXAMPLES = ROOT / "examples" / "media"
BASELINE_REF = "6233948"
"""main before this benchmark: ``clip`` opened the whole index."""
TARGETS = {"clip": 1.0, "list": 1.0, "remove --help": 1.0, "mcp --print-config": 1.0}
SEARCH_TARGET = 1.2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="processes per command (1-50)")
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 50:
        parser.error("--runs must be within 1..50")
    versions = [release(args.baseline_ref), today()]
    index = _index(versions[1])
    load_before = load_average()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        for name, command in _commands(index, Path(scratch)).items():
            for version in versions:  # untimed: bytecode and the OS file cache warm
                _timed(version, command)
            times: dict[str, list[float]] = {v.name: [] for v in versions}
            for round_ in range(args.runs):
                for version in versions if round_ % 2 == 0 else versions[::-1]:
                    times[version.name].append(_timed(version, command))
            figures[name] = {v: statistics.median(t) for v, t in times.items()}
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_average": {"before": load_before, "after": load_average()},
        "runs": args.runs,
        "versions": [v.name for v in versions],
        "median_s": figures,
    }
    _print(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


def _commands(index: Path, scratch: Path) -> dict[str, list[str]]:
    where = ["--index", str(index)]
    moment = ["team_sync.mp3", "--from", "5", "--to", "15", "-o", str(scratch / "m.mp3")]
    return {
        "clip": ["clip", *moment, *where],
        "list": ["list", *where],
        "remove --help": ["remove", "--help"],
        "mcp --print-config": ["mcp", "--print-config", *where],
        "search": ["search", "when is the release planned", "--json", *where],
    }


def _timed(version: Version, command: list[str]) -> float:
    done = run(version.cli(*command), compiled_env(version))
    if done.returncode != 0:
        raise SystemExit(f"{version.name} {' '.join(command[:2])} failed:\n{done.stderr}")
    return done.wall_s


def _index(builder: Version) -> Path:
    folder = CACHE / "cold_start" / "index"
    if not (folder / "manifest.sqlite").is_file():
        print(f"building the index with {builder.name} in {folder} ...", file=sys.stderr)
        files = [str(EXAMPLES / "team_sync.mp3"), str(EXAMPLES / "handbook.md")]
        done = run(
            builder.cli("ingest", *files, "--index", str(folder), "--quiet"), compiled_env(builder)
        )
        if done.returncode != 0:
            raise SystemExit(f"building the index failed:\n{done.stderr}")
    return folder


def _print(result: dict) -> None:
    load = result["load_average"]
    print(
        f"cold start, median of {result['runs']} processes per command, {result['machine']}, "
        f"load average {load['before']} before, {load['after']} after"
    )
    baseline, now = result["versions"]
    print(f"{'command':<20} {baseline:>22} {now:>10} {'target':>7}")
    for name, row in result["median_s"].items():
        target = TARGETS.get(name, SEARCH_TARGET)
        print(f"{name:<20} {row[baseline]:>20.2f} s {row[now]:>8.2f} s {target:>5.1f} s")


if __name__ == "__main__":
    raise SystemExit(main())
