"""``serve`` stopped the way service managers stop it leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from llama_index_video.store.snapshot import PREFIX
from tests.real_servers import free_port
from tests.service.test_versions import _wait_for


def test_sigterm_deletes_the_private_copy_of_the_index(example_index, tmp_path):
    """systemd, Docker and Kubernetes stop a service with SIGTERM, after which uvicorn
    raises the signal again and code after its ``run`` never runs: every stop left a
    copy of the whole index in the temporary folder."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    temp = tmp_path / "temp"
    temp.mkdir()
    port = free_port()
    log = tmp_path / "serve.log"
    command = ("serve", "--index", str(folder), "--port", str(port))
    with log.open("w") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_index_video.cli.main", *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env={**os.environ, "TMPDIR": str(temp)},
        )
    try:
        _wait_for(f"http://127.0.0.1:{port}", server, log)
        assert len(_copies(temp)) == 1
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert "Traceback" not in log.read_text(), log.read_text()
    assert _copies(temp) == []


def _copies(temp: Path) -> list[Path]:
    return sorted(temp.glob(f"{PREFIX}*"))
