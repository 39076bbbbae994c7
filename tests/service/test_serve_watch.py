"""``serve --watch DIR``: the service answers for what lands in the folder while it runs,
and stops its watcher when it stops."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from llama_index_video.cli.main import main
from tests.real_servers import free_port
from tests_support import ROOT

WAIT_SECONDS = 240.0


def test_serve_watches_a_folder_beside_the_service_and_stops_it(tmp_path):
    folder, index = tmp_path / "drop", tmp_path / "index"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nThe kickoff meeting is on Monday.\n")
    assert main(["ingest", str(folder), "--index", str(index), "--quiet"]) == 0
    port = free_port()
    command = [sys.executable, "-m", "llama_index_video.cli.main", "serve", "--index", str(index)]
    command += ["--port", str(port), "--llm", "none", "--watch", str(folder)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    url = f"http://127.0.0.1:{port}"
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
