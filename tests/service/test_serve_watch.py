"""``serve --watch DIR``: the service answers for what lands in the folder while it runs,
and stops its watcher when it stops, even when killed with SIGKILL."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from llama_index_video.cli.main import main
from tests.real_servers import free_port
from tests_support import ROOT

WAIT_SECONDS = 240.0


def _serve_watching(tmp_path: Path) -> tuple[Path, subprocess.Popen, str]:
    """``serve --watch`` over an index of one file: the folder, the process, its URL."""
    folder, index = tmp_path / "drop", tmp_path / "index"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nThe kickoff meeting is on Monday.\n")
    assert main(["ingest", str(folder), "--index", str(index), "--quiet"]) == 0
    port = free_port()
    command = [sys.executable, "-m", "llama_index_video.cli.main", "serve", "--index", str(index)]
    command += ["--port", str(port), "--llm", "none", "--watch", str(folder)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return folder, server, f"http://127.0.0.1:{port}"


def test_serve_watches_a_folder_beside_the_service_and_stops_it(tmp_path):
    folder, server, url = _serve_watching(tmp_path)
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        (folder / "second.md").write_text("# Second\n\nThe offsite moves to the lighthouse.\n")
        while True:
            assert server.poll() is None, server.communicate()
            assert time.monotonic() < deadline, "the new file never reached the service"
            try:
                names = {e["source"] for e in httpx.get(f"{url}/api/library").json()}
            except httpx.TransportError:
                names = set()
            if str(folder / "second.md") in names:
                break
            time.sleep(0.5)
        server.terminate()
        out, err = server.communicate(timeout=120)
    finally:
        server.kill()
    assert "Traceback" not in err.decode()
    lines = out.decode().splitlines()
    assert any(line.startswith("indexed ") and "second.md" in line for line in lines)
    assert lines[-1] == "stopped"


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (Linux ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for whoever adopted it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_watcher_stops_when_the_service_is_killed_outright(tmp_path):
    _, server, _ = _serve_watching(tmp_path)
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()
    watcher = None
    try:
        assert lines.get(timeout=WAIT_SECONDS).startswith(b"watching ")
        (watcher,) = _children(server.pid)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=WAIT_SECONDS)
        deadline = time.monotonic() + 30
        while _running(watcher) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _running(watcher), "the watcher outlived the service killed with SIGKILL"
    finally:
        server.kill()
        if watcher is not None and _running(watcher):
            os.kill(watcher, signal.SIGKILL)
    said = []
    while not lines.empty():
        said.append(lines.get().decode())
    assert said[-2:] == ["the service is gone; stopping after the ingest under way\n", "stopped\n"]
