"""Load on the HTTP service: concurrent clients searching for a fixed time (issue 7).

Run from the repository root::

    python benchmarks/service_load.py [--index DIR] [--clients 50] [--seconds 20]
                                      [--single 200] [--json FILE]

It starts the real service (``llama-index-video serve``: uvicorn, one process) in a
child process on a free port of 127.0.0.1, over an index of the bundled examples
(built under ``benchmarks/.cache/service_load/`` with ``llama-index-video ingest`` on
the first run and reused; ``--index`` serves yours), waits for ``/api/health``, then:

1. Single client, warm: ``--single`` searches one after the other on one keep-alive
   connection, after ``--warmup`` unmeasured ones. Each is the wall time of
   ``GET /api/search`` as the client sees it: query embedding, retrieval,
   postprocessing, JSON and HTTP.
2. Load: ``--clients`` concurrent clients (asyncio tasks sharing a pool of as many
   keep-alive connections) each send searches back to back until ``--seconds`` have
   passed. Reported: requests, throughput, latency percentiles and errors (a status
   other than 200, or a transport error or timeout).

Bounded in time and count: no request starts after the deadline, each has a 30 s
timeout, and ``--max-requests`` caps the total. Loopback only: the host is fixed.
The clients share the machine with the service, so on a small machine they take CPU
from it; the figures are a floor. The service's own CPU time per search under load
(``/proc/<pid>/stat``, all its threads) is reported too: it is what bounds the
throughput on a busy machine, and it moves far less than wall times with the load of
other work. Exits non-zero if any request failed.

``--baseline-ref REF --rounds N`` serves the same index with today's code and with the
commit ``REF`` (exported by :mod:`benchmarks.baseline`, run in the same virtualenv),
one after the other in each round, the order alternating, and reports each round's
figures, their medians and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.latency_support import LatencySummary, summarise  # noqa: E402

HOST = "127.0.0.1"
EXAMPLES = ROOT / "examples" / "media"
CACHE = ROOT / "benchmarks" / ".cache" / "service_load"
REQUEST_TIMEOUT_S = 30.0
START_TIMEOUT_S = 180.0
CLI = (sys.executable, "-m", "llama_index_video.cli.main")
QUERIES = (
    "how much ultraviolet C radiation is absorbed",
    "when was the ozone hole discovered",
    "why does the temperature rise in the stratosphere",
    "what banned the chemicals that damage ozone",
    "when will the ozone layer recover",
    "what happens when the card is declined at checkout",
    "what did the team decide about the release",
    "when do production deploys happen",
    "when does the staging environment reset",
    "where are incidents reported",
    "a question about sourdough bread",
    "how many oxygen atoms make an ozone molecule",
)


@dataclass(frozen=True)
class LoadResult:
    """One load run: what was sent, what failed, and the latencies of the rest."""

    clients: int
    seconds: float
    requests: int
    errors: int
    error_kinds: dict[str, int]
    throughput: float
    latency: LatencySummary | None
    server_cpu_ms_per_search: float | None = None  # the service's CPU time / requests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=None, help="index folder to serve")
    parser.add_argument("--clients", type=_bounded(1, 200), default=50)
    parser.add_argument("--seconds", type=float, default=20.0, help="load duration (max 120)")
    parser.add_argument("--single", type=_bounded(1, 5000), default=200)
    parser.add_argument("--warmup", type=_bounded(0, 1000), default=20)
    parser.add_argument("--max-requests", type=_bounded(1, 1_000_000), default=100_000)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--baseline-ref", metavar="REF", help="also serve this commit, rounds alternating"
    )
    parser.add_argument("--rounds", type=_bounded(1, 20), default=3)
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 120:
        parser.error("--seconds must be within (0, 120]")

    index = (args.index or _example_index()).resolve()
    if args.baseline_ref:
        return side_by_side(index, args)
    single, load, health = _measure(index, args)

    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_end": os.getloadavg(),
        },
        "index": {"path": str(index), "files": health["files"]},
        "single_client_warm_ms": asdict(single),
        "load": asdict(load),
    }
    _print(single, load)
    print(f"{os.cpu_count()} CPUs; load average at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if load.errors == 0 else 1


def _measure(
    index: Path,
    args: argparse.Namespace,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[LatencySummary, LoadResult, dict[str, object]]:
    """Serve ``index`` from a child process (``env``, ``cwd``); one client, then the load."""
    port = _free_port()
    server = _start(index, port, env=env, cwd=cwd)
    base = f"http://{HOST}:{port}"
    try:
        single = asyncio.run(_single(base, args.single, args.warmup))
        cpu_before = _cpu_seconds(server.pid)
        load = asyncio.run(_load(base, args.clients, args.seconds, args.max_requests))
        cpu = _cpu_seconds(server.pid) - cpu_before
        health = httpx.get(f"{base}/api/health", timeout=REQUEST_TIMEOUT_S).json()
    finally:
        server.terminate()
        server.wait(timeout=30)
    if load.requests:
        load = replace(load, server_cpu_ms_per_search=round(cpu * 1000 / load.requests, 1))
    return single, load, health


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its threads (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def side_by_side(index: Path, args: argparse.Namespace) -> int:
    """Today's service and ``--baseline-ref``'s, alternating (see the module docstring)."""
    from benchmarks.baseline import release, today

    versions = {"today": today(), f"{args.baseline_ref}": release(args.baseline_ref)}
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in versions}
    failed = 0
    for number in range(args.rounds):
        names = list(versions) if number % 2 == 0 else list(versions)[::-1]
        for name in names:
            version = versions[name]
            started_load = os.getloadavg()[0]
            single, load, _ = _measure(index, args, env=version.env(), cwd=version.source)
            failed += load.errors
            rows[name].append((load.throughput, load.server_cpu_ms_per_search or 0.0, single.p50))
            print(
                f"round {number + 1} {name}: {load.throughput} searches/s, server CPU "
                f"{load.server_cpu_ms_per_search} ms/search, single p50 {single.p50:.1f} ms, "
                f"{load.errors} errors (load {started_load:.1f})",
                flush=True,
            )
    print()
    print(f"{args.clients} clients, {args.seconds:g} s per run; medians of {args.rounds} rounds:")
    print(f"{'version':<28}{'searches/s':>12}{'server CPU ms':>15}{'single p50 ms':>15}")
    medians = {}
    for name, measured in rows.items():
        medians[name] = [statistics.median(column) for column in zip(*measured, strict=True)]
        label = f"{name} ({versions[name].source.name})"
        throughput, cpu, single_p50 = medians[name]
        print(f"{label:<28}{throughput:>12.1f}{cpu:>15.1f}{single_p50:>15.1f}")
    now, before = medians["today"], medians[args.baseline_ref]
    print(
        f"today / {args.baseline_ref}: throughput {now[0] / before[0]:.2f}x, server CPU per "
        f"search {before[1] / now[1]:.2f}x less, single client {before[2] / now[2]:.2f}x faster"
    )
    print(f"{os.cpu_count()} CPUs; load average at the end {os.getloadavg()[0]:.1f}")
    return 0 if failed == 0 else 1


async def _single(base: str, count: int, warmup: int) -> LatencySummary:
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT_S) as client:
        queries = itertools.cycle(QUERIES)
        for _ in range(warmup):
            (await client.get("/api/search", params={"q": next(queries)})).raise_for_status()
        latencies = []
        for _ in range(count):
            started = time.perf_counter()
            response = await client.get("/api/search", params={"q": next(queries)})
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()
    return summarise(latencies)


async def _load(base: str, clients: int, seconds: float, max_requests: int) -> LoadResult:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    latencies: list[float] = []
    errors: dict[str, int] = {}
    sent = itertools.count()
    queries = itertools.cycle(QUERIES)
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
        started = time.perf_counter()
        deadline = started + seconds

        async def one_client() -> None:
            while time.perf_counter() < deadline and next(sent) < max_requests:
                begun = time.perf_counter()
                try:
                    response = await client.get("/api/search", params={"q": next(queries)})
                    kind = None if response.status_code == 200 else f"HTTP {response.status_code}"
                except httpx.HTTPError as exc:
                    kind = type(exc).__name__
                if kind is None:
                    latencies.append(time.perf_counter() - begun)
                else:
                    errors[kind] = errors.get(kind, 0) + 1

        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    done = len(latencies)
    return LoadResult(
        clients=clients,
        seconds=round(elapsed, 2),
        requests=done + sum(errors.values()),
        errors=sum(errors.values()),
        error_kinds=errors,
        throughput=round(done / elapsed, 1),
        latency=summarise(latencies) if latencies else None,
    )


def _example_index() -> Path:
    """The examples' index under the cache folder, built with the CLI when missing."""
    folder = CACHE / "index"
    if not (folder / "manifest.sqlite").is_file():
        print(f"building the example index in {folder} ...", file=sys.stderr)
        subprocess.run(
            [*CLI, "ingest", str(EXAMPLES), "--index", str(folder), "--quiet"],
            check=True,
            timeout=900,
        )
    return folder


def _start(
    index: Path, port: int, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    command = [*CLI, "serve", "--index", str(index), "--host", HOST, "--port", str(port)]
    server = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            error = server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"the service exited with {server.returncode}:\n{error}")
        try:
            if httpx.get(f"http://{HOST}:{port}/api/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.25)
    server.terminate()
    raise SystemExit(f"the service did not answer within {START_TIMEOUT_S:.0f} s")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _bounded(low: int, high: int):
    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be within {low}..{high}")
        return value

    return parse


def _print(single: LatencySummary, load: LoadResult) -> None:
    print(f"{'':34}{'n':>7}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}  (ms)")
    print(_row("single client, warm", single))
    if load.latency is not None:
        print(_row(f"{load.clients} clients, {load.seconds:.0f} s", load.latency))
    print(
        f"throughput {load.throughput} searches/s; {load.requests} requests, "
        f"{load.errors} errors {load.error_kinds or ''}; service CPU "
        f"{load.server_cpu_ms_per_search} ms per search"
    )


def _row(name: str, summary: LatencySummary) -> str:
    return (
        f"{name:34}{summary.count:>7}{summary.p50:>9.1f}{summary.p95:>9.1f}"
        f"{summary.p99:>9.1f}{summary.max:>9.1f}"
    )


if __name__ == "__main__":
    sys.exit(main())
