"""``serve`` answers every search while a writer replaces a file, or is killed and run again.

A real ``serve`` process on loopback, clients searching all along (bounded loops),
and real ``ingest`` processes replacing a large Markdown file in the same folder: once
to completion, once killed with ``-9`` half-way, and once more to completion. Reading
the folder in place, the service answered 503 (a reload took the writer's half-done
state for damage: "the vector store holds 1987 of the 2004 moments") and 500 (a
filtered search asked Chroma's loaded vector index for rows a writer had added since:
``InternalError: Error finding id``), with tracebacks in its log. It serves private
copies of finished versions now: every search is answered, always from one complete
version, and the last version is served once its writer has finished.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.store.test_waiting_writers import _writing

CLI = (sys.executable, "-m", "llama_index_video.cli.main")
SECTIONS = 500
"""Moments of the replaced file: enough that its rows are written in many batches, and
that its old and new rows together (the old ones go once the new ones are in) pass
Chroma's 1,000 writes after which it rewrites its vector index files."""
CLIENTS = 3
MAX_REQUESTS = 4000
"""Per client: every client loop ends by this count, or when the writers are done."""
PAUSE_S = 0.1
"""Between a client's searches. Back to back, the clients kept ``serve`` searching on a
whole core while the writers ran (about 25 ms of CPU a search). Paced, they still meet
every step of a writer's run: the service before private versions (e9a9475^) answered
194 of 1,264 searches 500 (back to back: 298 of 1,763)."""


def _manual(path: Path, version: str) -> None:
    path.write_text(
        "\n\n".join(
            f"## Valve {n}\n\n{version} edition: valve {n}, every {n % 9 + 1} days."
            for n in range(SECTIONS)
        )
        + f"\n\n## Edition\n\nThis is the {version} edition of the cooling manual."
    )


def _ingest(path: Path, index_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "ingest", str(path), "--index", str(index_dir), "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _first_edition(tmp_path: Path) -> tuple[Path, Path]:
    """The manual, ingested in its first edition by ``ingest`` run in this process (the
    writers under test are other processes): (its path, the index folder)."""
    from llama_index_video.cli.main import main
    from llama_index_video.store.folder import IndexFolder

    manual = tmp_path / "docs" / "manual.md"
    manual.parent.mkdir()
    index_dir = tmp_path / "index"
    _manual(manual, "first")
    assert main(["ingest", str(manual), "--index", str(index_dir), "--quiet"]) == 0
    IndexFolder(index_dir).release()  # other processes write it from now on
    return manual, index_dir


def _start_ingest(path: Path, index_dir: Path) -> subprocess.Popen[str]:
    """An ``ingest`` of ``path`` running in the background (its stderr piped)."""
    return subprocess.Popen(
        [*CLI, "ingest", str(path), "--index", str(index_dir), "--quiet"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(url: str, server: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 240
    while True:
        assert server.poll() is None, log.read_text()
        try:
            httpx.get(f"{url}/api/health", timeout=10).raise_for_status()
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, "serve did not answer"
            time.sleep(0.5)


def _answered(statuses: Counter[int], more: int, seconds: float = 120.0) -> None:
    """Wait until the clients have had ``more`` further searches answered."""
    goal = sum(statuses.values()) + more
    deadline = time.monotonic() + seconds
    while sum(statuses.values()) < goal:
        assert time.monotonic() < deadline, f"the clients stopped searching: {dict(statuses)}"
        time.sleep(0.05)


def _searching(url: str, statuses: Counter[int], empty: list[int], done: threading.Event) -> None:
    """Search every :data:`PAUSE_S` (every second search filtered by modality) until
    ``done``."""
    with httpx.Client(base_url=url, timeout=60) as client:
        for n in range(MAX_REQUESTS):
            if done.wait(PAUSE_S):
                return
            params = {"q": "how often is valve 12 of the cooling loop checked", "top_k": "5"}
            if n % 2:
                params["modality"] = "text,transcript"
            try:
                answer = client.get("/api/search", params=params)
            except httpx.TransportError:
                statuses[0] += 1
                continue
            statuses[answer.status_code] += 1
            if answer.status_code == 200 and not answer.json():
                empty.append(n)


@pytest.mark.timeout(900)
def test_searches_are_answered_while_a_file_is_replaced_killed_and_replaced_again(tmp_path):
    manual, index_dir = _first_edition(tmp_path)

    url = f"http://127.0.0.1:{_free_port()}"
    log = tmp_path / "serve.log"
    with log.open("w") as errors:
        server = subprocess.Popen(
            [*CLI, "serve", "--index", str(index_dir), "--port", url.rsplit(":", 1)[1]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
    statuses: Counter[int] = Counter()
    empty: list[int] = []
    done = threading.Event()
    clients = [
        threading.Thread(target=_searching, args=(url, statuses, empty, done))
        for _ in range(CLIENTS)
    ]
    try:
        _wait_for(url, server, log)
        for client in clients:
            client.start()

        _manual(manual, "second")  # replaced by a writer that finishes
        assert _ingest(manual, index_dir).returncode == 0

        _manual(manual, "third")  # a writer killed half-way, then run again
        killed = _start_ingest(manual, index_dir)
        _writing(killed, index_dir)
        os.kill(killed.pid, signal.SIGKILL)
        killed.communicate(timeout=60)
        _answered(statuses, 3 * CLIENTS)  # searches against the killed writer's leftovers
        again = _ingest(manual, index_dir)
        assert again.returncode == 0, again.stderr
        _answered(statuses, 3 * CLIENTS)  # and against the version it finished
    finally:
        done.set()
        for client in clients:
            client.join(timeout=120)
        served = httpx.get(
            f"{url}/api/search", params={"q": "which edition is the cooling manual"}, timeout=60
        )
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)

    text = log.read_text()
    assert statuses[200] > 0 and set(statuses) == {200}, (dict(statuses), text[-3000:])
    assert not empty, f"{len(empty)} searches found nothing"
    assert "Traceback" not in text, text[-3000:]
    assert served.status_code == 200 and "third edition" in served.json()[0]["text"], served.text
