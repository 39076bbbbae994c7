"""A cold ``llama-index-video search ... --json`` as a whole process, today vs 0.1.0 (issue 13).

Run from the repository root, in the test virtualenv (the 0.1.0 baseline needs torch and
sentence-transformers; today's code must not import them)::

    python benchmarks/cli_search.py [--runs 10] [--baseline-ref REF] [--json FILE]

The example index is built once by the 0.1.0 CLI under
``benchmarks/.cache/cli_search/`` (so both versions open the very same folder, as a user
upgrading would). Each round runs one search process of each version, in alternating
order, with a different query per round; a process is timed from start to exit, with
its own peak RSS (:mod:`benchmarks.baseline`). "Cold" is a new Python process each
time; the operating system's file cache stays warm, as it is for someone searching
again and again. Both must print the same best hit (file and span) for each query.

Then one ``-X importtime`` run of today's search lists the heaviest imports and checks
that torch, transformers and sentence-transformers are not among them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import CACHE, Version, release, run, today  # noqa: E402
from benchmarks.latency_support import summarise  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
QUERIES = (
    "why does the temperature rise in the stratosphere",
    "when was the ozone hole discovered",
    "how much ultraviolet C radiation is absorbed",
    "what banned the chemicals that damage ozone",
    "when is the release of version 2.4 planned",
    "on which days do production deploys happen",
)
HEAVY = ("torch", "transformers", "sentence_transformers", "scipy", "sklearn")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="processes per version (1-100)")
    parser.add_argument("--baseline-ref", default=None, help="git ref of the baseline")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 100:
        parser.error("--runs must be within 1..100")
    versions = [release(args.baseline_ref), today()]
    index = _example_index(versions[0])
    wall: dict[str, list[float]] = {v.name: [] for v in versions}
    rss: dict[str, list[float]] = {v.name: [] for v in versions}
    for round_ in range(args.runs):
        query = QUERIES[round_ % len(QUERIES)]
        best = {}
        for version in versions if round_ % 2 == 0 else versions[::-1]:
            done = run(version.cli("search", query, "--index", str(index), "--json"), version.env())
            if done.returncode != 0:
                raise SystemExit(f"{version.name} search failed:\n{done.stderr}")
            wall[version.name].append(done.wall_s)
            rss[version.name].append(done.peak_rss_mb)
            best[version.name] = _best(done.stdout)
        if len(set(best.values())) != 1:
            raise SystemExit(f"the versions disagree on {query!r}: {best}")
    imports = _heaviest_imports(versions[1], index)
    figures = {
        "machine": f"{platform.machine()}, {_cpus()} CPUs, Python {platform.python_version()}",
        "runs": args.runs,
        "versions": {
            v.name: {
                "wall_s": summarise(wall[v.name]).__dict__,
                "peak_rss_mb_max": max(rss[v.name]),
                "peak_rss_mb_p50": sorted(rss[v.name])[len(rss[v.name]) // 2],
            }
            for v in versions
        },
        "heaviest_imports_today": imports,
    }
    _print(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    loaded = {name for name, _ in imports} & set(HEAVY)
    return 1 if loaded else 0


def _example_index(builder: Version) -> Path:
    folder = CACHE / "cli_search" / "index"
    if not (folder / "manifest.sqlite").is_file():
        print(f"building the example index with {builder.name} in {folder} ...", file=sys.stderr)
        command = builder.cli("ingest", str(EXAMPLES), "--index", str(folder), "--quiet")
        done = run(command, builder.env(), timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"building the index failed:\n{done.stderr}")
    return folder


def _best(stdout: str) -> tuple[str, float | None, float | None] | None:
    """File and span of the best hit; a document's hit has no span (``None``)."""
    hits = json.loads(stdout)
    hits = hits.get("hits", hits) if isinstance(hits, dict) else hits
    if not hits:
        return None
    top = hits[0]
    return (Path(top["source"]).name, _rounded(top["start"]), _rounded(top["end"]))


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 2)


def _heaviest_imports(version: Version, index: Path, top: int = 12) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (ms) in one search process."""
    command = version.cli("search", QUERIES[0], "--index", str(index), "--json")
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        env=version.env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    cumulative: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(2)) == 1:  # top level: its time includes its children
            package = match.group(3).split(".")[0]
            cumulative[package] = cumulative.get(package, 0.0) + int(match.group(1)) / 1000
    return sorted(cumulative.items(), key=lambda item: -item[1])[:top]


def _cpus() -> int:
    return os.cpu_count() or 0


def _print(figures: dict) -> None:
    print(f"cold `search --json`, {figures['runs']} processes per version, {figures['machine']}")
    print(f"{'version':<22} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'peak RSS MB':>12}")
    for name, row in figures["versions"].items():
        wall = row["wall_s"]
        print(
            f"{name:<22} {wall['p50'] / 1000:7.2f} {wall['p95'] / 1000:7.2f} "
            f"{wall['max'] / 1000:7.2f} {row['peak_rss_mb_max']:12.0f}"
        )
    print("heaviest imports of today's search (cumulative ms):")
    for name, ms in figures["heaviest_imports_today"]:
        print(f"  {name:<28} {ms:8.0f}")


if __name__ == "__main__":
    raise SystemExit(main())
