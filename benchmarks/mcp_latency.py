"""Warm MCP tool-call latency beside ``VideoIndex.search``, in the same run (issue 24).

Run from the repository root, on an index of the example media::

    llama-index-video ingest examples/media --index /tmp/example_index
    python benchmarks/mcp_latency.py --index /tmp/example_index [--calls 50]

It times, per query, after warm-up calls: (a) ``VideoIndex.search`` in this process;
(b) the ``search_moments`` tool called through the official MCP client on a
``llama-index-video mcp`` server over stdio (a process of its own: JSON-RPC, the
tool's JSON and the search together); (c) the same over streamable HTTP on loopback,
one session. Prints p50/p95 in milliseconds of each and ``uptime`` (the machine is
shared, so say so when quoting the figures).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = [
    "who owns the billing provider migration",
    "when is version two point four released",
    "what is the tail latency problem",
    "how is the payments table sharded",
    "what does the ozone layer absorb",
    "when was the ozone hole discovered",
    "security checklist",
    "cache time to live",
]
ROOT = Path(__file__).resolve().parents[1]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"


def direct(index_dir: Path, calls: int) -> list[float]:
    from llama_index_video.index import VideoIndex

    index = VideoIndex(index_dir)
    for query in QUERIES:
        index.search(query)
    times = []
    for n in range(calls):
        start = time.perf_counter()
        index.search(QUERIES[n % len(QUERIES)])
        times.append(time.perf_counter() - start)
    index.close()
    return times


async def over(session, calls: int) -> list[float]:  # session: mcp.ClientSession
    await session.initialize()
    for query in QUERIES:
        await session.call_tool("search_moments", {"query": query})
    times = []
    for n in range(calls):
        start = time.perf_counter()
        result = await session.call_tool("search_moments", {"query": QUERIES[n % len(QUERIES)]})
        times.append(time.perf_counter() - start)
        assert not result.is_error, result
    return times


async def stdio(index_dir: Path, calls: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "llama_index_video.cli.main", "mcp", "--index", str(index_dir)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        return await over(session, calls)


async def http(index_dir: Path, calls: int) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = ["-m", "llama_index_video.cli.main", "mcp", "--http", "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, *command, "--index", str(index_dir)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # ends: a deadline
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await over(session, calls)
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(f"VideoIndex.search          {percentiles(direct(args.index, args.calls))}")
    print(f"MCP search_moments (stdio) {percentiles(asyncio.run(stdio(args.index, args.calls)))}")
    print(f"MCP search_moments (HTTP)  {percentiles(asyncio.run(http(args.index, args.calls)))}")


if __name__ == "__main__":
    main()
