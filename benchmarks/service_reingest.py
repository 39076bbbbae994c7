"""Searches against ``serve`` while ``ingest`` replaces a file, is killed, runs again (issue 34).

Run from the repository root::

    python benchmarks/service_reingest.py [--sections 2000] [--clients 4]
                                          [--kill-after 3] [--baseline-ref REF]

In a temporary folder it writes a Markdown manual of ``--sections`` moments, ingests
it, and starts the real service over that index (a child process on a free port of
127.0.0.1). Then, while ``--clients`` clients search back to back (every second search
filtered by modality), three writers replace the manual with a new edition:

1. ``replace``: an ``ingest`` of the second edition, to its end;
2. ``killed``: an ``ingest`` of the third edition, killed with ``-9`` ``--kill-after``
   seconds after it took the writer lock, then 2 s of searching against its leftovers;
3. ``re-run``: the same ``ingest`` again, to its end.

Reported per phase: searches answered 200, and the others by status (``0``: a transport
error or timeout); and the tracebacks in the service's log. ``--baseline-ref`` runs the
same with that commit's code (:mod:`benchmarks.baseline`) after today's. Bounded: each
client stops when the writers are done or after ``--max-requests``; every child has a
timeout. Exits non-zero if any search was not answered 200.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import Version, load_average, release, today  # noqa: E402
from benchmarks.service_load import HOST, _bounded, _free_port  # noqa: E402

CHILD_TIMEOUT_S = 900.0
QUERY = "how often is valve 12 of the cooling loop checked"
PHASES = ("replace", "killed", "re-run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", type=_bounded(10, 20_000), default=2000)
    parser.add_argument("--clients", type=_bounded(1, 32), default=4)
    parser.add_argument("--kill-after", type=float, default=3.0, help="seconds (max 60)")
    parser.add_argument("--max-requests", type=_bounded(1, 1_000_000), default=50_000)
    parser.add_argument("--baseline-ref", metavar="REF", help="also run this commit's code")
    args = parser.parse_args(argv)
    if not 0 <= args.kill_after <= 60:
        parser.error("--kill-after must be within [0, 60]")
    versions = [today()] + ([release(args.baseline_ref)] if args.baseline_ref else [])
    failed = 0
    for version in versions:
        counts, tracebacks = run_once(version, args)
        failed += sum(n for (_, status), n in counts.items() if status != 200)
        print(f"{version.name} ({version.source}); load average {load_average()}")
        for phase in PHASES:
            mine = {status: n for (name, status), n in counts.items() if name == phase}
            others = {status: n for status, n in mine.items() if status != 200}
            print(f"  {phase:8} {mine.get(200, 0):6} answered 200, others {others or 'none'}")
        print(f"  tracebacks in the service's log: {tracebacks}", flush=True)
    print(f"{os.cpu_count()} CPUs; {args.sections} moments, {args.clients} clients")
    return 0 if failed == 0 else 1


def run_once(version: Version, args: argparse.Namespace) -> tuple[Counter[tuple[str, int]], int]:
    """The three phases against ``version``'s service and writers: counts per
    (phase, status), and the tracebacks in the service's log."""
    with tempfile.TemporaryDirectory(prefix="service-reingest-") as scratch:
        folder = Path(scratch)
        manual, index, log = folder / "manual.md", folder / "index", folder / "serve.log"
        _write(manual, "first", args.sections)
        _cli(version, "ingest", str(manual), "--index", str(index), "--quiet")
        port = _free_port()
        with log.open("w") as errors:
            server = subprocess.Popen(
                version.cli("serve", "--index", str(index), "--host", HOST, "--port", str(port)),
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=version.env(),
                cwd=version.source,
            )
        phase = [PHASES[0]]
        counts: Counter[tuple[str, int]] = Counter()
        done = threading.Event()
        clients = [
            threading.Thread(
                target=_search, args=(f"http://{HOST}:{port}", phase, counts, done, args)
            )
            for _ in range(args.clients)
        ]
        try:
            _wait_for_health(f"http://{HOST}:{port}", server)
            for client in clients:
                client.start()
            _write(manual, "second", args.sections)
            _cli(version, "ingest", str(manual), "--index", str(index), "--quiet")
            phase[0] = "killed"
            _write(manual, "third", args.sections)
            _killed(version, manual, index, args.kill_after)
            time.sleep(2)
            phase[0] = "re-run"
            _cli(version, "ingest", str(manual), "--index", str(index), "--quiet")
        finally:
            done.set()
            for client in clients:
                client.join(timeout=CHILD_TIMEOUT_S)
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        return counts, log.read_text().count("Traceback")


def _write(path: Path, edition: str, sections: int) -> None:
    path.write_text(
        "\n\n".join(
            f"## Valve {n}\n\nIn the {edition} edition, valve {n} of the cooling loop is "
            f"checked every {n % 9 + 1} days."
            for n in range(sections)
        )
    )


def _cli(version: Version, *args: str) -> None:
    subprocess.run(
        version.cli(*args),
        check=True,
        capture_output=True,
        env=version.env(),
        cwd=version.source,
        timeout=CHILD_TIMEOUT_S,
    )


def _killed(version: Version, manual: Path, index: Path, after: float) -> None:
    """An ``ingest`` killed with -9 ``after`` seconds once it holds the writer lock."""
    writer = subprocess.Popen(
        version.cli("ingest", str(manual), "--index", str(index), "--quiet"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=version.env(),
        cwd=version.source,
    )
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    lock = index / "write.lock"
    while f'"pid": {writer.pid},' not in (lock.read_text() if lock.exists() else ""):
        if writer.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the writer to kill ended before it took the lock")
        time.sleep(0.05)
    time.sleep(after)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)


def _wait_for_health(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the service exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.25)
    raise SystemExit("the service did not answer within 240 s")


def _search(
    base: str,
    phase: list[str],
    counts: Counter[tuple[str, int]],
    done: threading.Event,
    args: argparse.Namespace,
) -> None:
    """Search back to back until ``done`` (or ``--max-requests``), counting by phase."""
    with httpx.Client(base_url=base, timeout=60) as client:
        for n in range(args.max_requests):
            if done.is_set():
                return
            params = {"q": QUERY} | ({"modality": "text,transcript"} if n % 2 else {})
            current = phase[0]
            try:
                status = client.get("/api/search", params=params).status_code
            except httpx.HTTPError:
                status = 0
            counts[(current, status)] += 1


if __name__ == "__main__":
    sys.exit(main())
