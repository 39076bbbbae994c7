"""``serve`` stopped the way service managers stop it leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from llama_index_video.store.snapshot import PREFIX
from tests.real_servers import free_port


def test_sigterm_deletes_the_private_copy_of_the_index(example_index, tmp_path):
    """systemd, Docker and Kubernetes stop a service with SIGTERM, after which uvicorn
    raises the signal again and code after its ``run`` never runs: every stop left a
    copy of the whole index in the temporary folder."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    temp = tmp_path / "temp"
    temp.mkdir()
    port = free_port()
    command = ("serve", "--index", str(folder), "--port", str(port))
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_index_video.cli.main", *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    try:
        deadline = time.monotonic() + 240
        while True:  # ends: the deadline is fixed
            assert server.poll() is None, server.communicate()
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=10).raise_for_status()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not answer"
                time.sleep(0.5)
        assert len(_copies(temp)) == 1
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert "Traceback" not in err, err
    assert _copies(temp) == []


def _copies(temp: Path) -> list[Path]:
    return sorted(temp.glob(f"{PREFIX}*"))
