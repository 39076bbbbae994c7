"""Cold start of the CLI's quick commands, this commit against a baseline (issue 38).

Run from the repository root, in the test virtualenv::

    python benchmarks/cold_start.py [--runs 5] [--baseline-ref REF] [--json FILE]

Each command (``clip``, ``list``, ``remove --help``, ``mcp --print-config``,
``search``) runs as a whole new process, ``--runs`` times per version, the versions
alternating, after one untimed run of each; the figure is the median wall time from
start to exit (:mod:`benchmarks.baseline`), with the median CPU time of the process
beside it (less sensitive to a shared machine's load). Then today's ``serve`` is
started over the same index and ``search`` timed again while it runs ("search, serve
running"): today's ``search`` asks it (:mod:`llama_index_video.cli.warm_search`), a
version without that searches the folder itself; today's must print the hits it
printed searching the folder. The baseline is the source at ``--baseline-ref``
(default: the commit before ``clip`` read the manifest alone), exported beside this
checkout in the same run. The index (``team_sync.mp3``, a
synthetic voice, and ``handbook.md``) is built once by today's code under
``benchmarks/.cache/cold_start/``; both versions open it. Targets: 1.0 s for the
quick commands, 1.2 s for ``search``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import (  # noqa: E402
    CACHE,
    ProcessRun,
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
SERVE_START_SECONDS = 180.0
"""How long ``serve`` may take to start (it loads the index and the model first)."""
SERVED = "search, serve running"


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
    cpu: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="cold-start-") as scratch:
        commands = _commands(index, Path(scratch))
        printed: dict[str, dict[str, str]] = {}
        for name, command in commands.items():
            figures[name], cpu[name], printed[name] = _rounds(versions, command, args.runs)
        with _serving(versions[1], index):
            figures[SERVED], cpu[SERVED], warm = _rounds(versions, commands["search"], args.runs)
        if warm[versions[1].name] != printed["search"][versions[1].name]:
            raise SystemExit("search printed other hits through the service than on its own")
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_average": {"before": load_before, "after": load_average()},
        "runs": args.runs,
        "versions": [v.name for v in versions],
        "median_s": figures,
        "median_cpu_s": cpu,
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


def _rounds(
    versions: list[Version], command: list[str], runs: int
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Median wall and CPU seconds of ``command`` per version, and what each printed last."""
    printed = {v.name: _timed(v, command).stdout for v in versions}  # untimed: caches warm
    times: dict[str, list[ProcessRun]] = {v.name: [] for v in versions}
    for round_ in range(runs):
        for version in versions if round_ % 2 == 0 else versions[::-1]:
            times[version.name].append(_timed(version, command))
    wall = {v: statistics.median(r.wall_s for r in t) for v, t in times.items()}
    cpu = {v: statistics.median(r.cpu_s for r in t) for v, t in times.items()}
    return wall, cpu, printed


def _timed(version: Version, command: list[str]) -> ProcessRun:
    done = run(version.cli(*command), compiled_env(version))
    if done.returncode != 0:
        raise SystemExit(f"{version.name} {' '.join(command[:2])} failed:\n{done.stderr}")
    return done


@contextmanager
def _serving(version: Version, index: Path) -> Iterator[None]:
    """``version``'s ``serve`` over ``index`` on a free loopback port, until the block ends."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = version.cli("serve", "--index", str(index), "--port", str(port))
    server = subprocess.Popen(
        command,
        env=compiled_env(version),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=version.source,
    )
    announced = index / "service.json"
    deadline = time.monotonic() + SERVE_START_SECONDS
    try:
        while not (announced.is_file() and str(port) in announced.read_text()):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start within {SERVE_START_SECONDS:.0f} s")
            time.sleep(0.2)
        yield
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


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
    print(f"{'command':<24} {baseline + ' (CPU)':>30} {now + ' (CPU)':>20} {'target':>7}")
    for name, row in result["median_s"].items():
        target = TARGETS.get(name, SEARCH_TARGET)
        used = result["median_cpu_s"][name]
        then = f"{row[baseline]:.2f} s ({used[baseline]:.2f})"
        print(f"{name:<24} {then:>30} {f'{row[now]:.2f} s ({used[now]:.2f})':>20} {target:>5.1f} s")


if __name__ == "__main__":
    raise SystemExit(main())
