"""A cold ``llama-index-video search ... --json`` as a whole process, today vs 0.1.0 (issue 13).

Run from the repository root, in the test virtualenv (the 0.1.0 baseline needs torch and
sentence-transformers; today's code must not import them)::

    python benchmarks/cli_search.py [--runs 10] [--baseline-ref REF] [--json FILE]

The example index is built once by the 0.1.0 CLI under
``benchmarks/.cache/cli_search/`` (so both versions open the very same folder, as a user
upgrading would). Each round runs one search process of each version, in alternating
order, with a different query per round, after an untimed search of each; a process is
timed from start to exit, with its own CPU time and peak RSS (:mod:`benchmarks.baseline`).
"Cold" is a new Python process each time; what a user's machine keeps between searches
stays warm: the operating system's file cache, the modules' bytecode (here under
``benchmarks/.cache/pycache``) and the package's model cache (the offline model
assembled, ONNX Runtime's optimized copy of it). Both versions must print the same best
hit (file and span) for each query.

Before the rounds, one search of today's code with an empty model cache (its own
``LLAMA_INDEX_VIDEO_CACHE_DIR``) shows what the very first search after installing
costs, when that cache is made.

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
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import (  # noqa: E402
    CACHE,
    ProcessRun,
    Version,
    compiled_env,
    release,
    run,
    today,
)
from benchmarks.latency_support import summarise  # noqa: E402
from llama_index_video.weights import CACHE_ENV  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
QUERIES = (
    "why does the temperature rise in the stratosphere",
    "when was the ozone hole discovered",
    "how much ultraviolet C radiation is absorbed",
    "what banned the chemicals that damage ozone",
    "when is the release of version 2.4 planned",
    "on which days do production deploys happen",
)
HEAVY = ("torch", "transformers", "sentence_transformers", "scipy", "sklearn", "tiktoken")


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
    load_before = os.getloadavg()
    for version in versions:  # untimed: caches the bytecode and today's model copy
        _search(version, index, QUERIES[-1])
    first = _first_search(versions[1], index)
    runs: dict[str, list[ProcessRun]] = {v.name: [] for v in versions}
    for round_ in range(args.runs):
        query = QUERIES[round_ % len(QUERIES)]
        best = {}
        for version in versions if round_ % 2 == 0 else versions[::-1]:
            done = _search(version, index, query)
            runs[version.name].append(done)
            best[version.name] = _best(done.stdout)
        if len(set(best.values())) != 1:
            raise SystemExit(f"the versions disagree on {query!r}: {best}")
    imports = _heaviest_imports(versions[1], index)
    figures = {
        "machine": f"{platform.machine()}, {_cpus()} CPUs, Python {platform.python_version()}",
        "load_average": {"before": load_before[0], "after": os.getloadavg()[0]},
        "runs": args.runs,
        "versions": {v.name: _figures(runs[v.name]) for v in versions},
        "first_search_today": {
            "wall_s": first.wall_s,
            "cpu_s": first.cpu_s,
            "peak_rss_mb": first.peak_rss_mb,
        },
        "heaviest_imports_today": imports,
    }
    _print(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    loaded = {name for name, _ in imports} & set(HEAVY)
    return 1 if loaded else 0


def _search(
    version: Version, index: Path, query: str, env: dict[str, str] | None = None
) -> ProcessRun:
    command = version.cli("search", query, "--index", str(index), "--json")
    done = run(command, env or compiled_env(version))
    if done.returncode != 0:
        raise SystemExit(f"{version.name} search failed:\n{done.stderr}")
    return done


def _first_search(version: Version, index: Path) -> ProcessRun:
    """One search with an empty model cache: the first after installing."""
    with tempfile.TemporaryDirectory(prefix="cli-search-cache-") as cache:
        return _search(version, index, QUERIES[0], {**compiled_env(version), CACHE_ENV: cache})


def _figures(runs: list[ProcessRun]) -> dict[str, object]:
    rss = sorted(r.peak_rss_mb for r in runs)
    return {
        "wall_s": summarise([r.wall_s for r in runs]).__dict__,
        "cpu_s_p50": sorted(r.cpu_s for r in runs)[len(runs) // 2],
        "peak_rss_mb_max": rss[-1],
        "peak_rss_mb_p50": rss[len(rss) // 2],
    }


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
        env=compiled_env(version),
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
    load = figures["load_average"]
    print(
        f"cold `search --json`, {figures['runs']} processes per version, {figures['machine']}, "
        f"load average {load['before']:.1f} before, {load['after']:.1f} after"
    )
    print(
        f"{'version':<22} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'CPU s p50':>10} "
        f"{'RSS MB p50':>11} {'RSS MB max':>11}"
    )
    for name, row in figures["versions"].items():
        wall = row["wall_s"]
        print(
            f"{name:<22} {wall['p50'] / 1000:7.2f} {wall['p95'] / 1000:7.2f} "
            f"{wall['max'] / 1000:7.2f} {row['cpu_s_p50']:10.2f} "
            f"{row['peak_rss_mb_p50']:11.0f} {row['peak_rss_mb_max']:11.0f}"
        )
    first = figures["first_search_today"]
    print(
        f"today's first search after installing (empty model cache): {first['wall_s']:.2f} s, "
        f"{first['cpu_s']:.2f} CPU s, {first['peak_rss_mb']:.0f} MB"
    )
    print("heaviest imports of today's search (cumulative ms):")
    for name, ms in figures["heaviest_imports_today"]:
        print(f"  {name:<28} {ms:8.0f}")


if __name__ == "__main__":
    raise SystemExit(main())
