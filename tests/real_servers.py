"""Real servers for the scale-out tests: a Chroma server and ``serve`` replicas.

Each runs as its own process on a free loopback port, is waited for with a bound, and
is always stopped (terminate, then kill) when the block ends.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

# Generous: a replica loads torch and the embedding model, on a machine shared with others.
STARTUP_SECONDS = 300.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _process(argv: Sequence[str]) -> Iterator[tuple[subprocess.Popen, Path]]:
    with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as out:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT)
    log = Path(out.name)
    try:
        yield proc, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.unlink(missing_ok=True)


def _wait_ready(proc: subprocess.Popen, log: Path, url: str, deadline: float) -> None:
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    output = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{proc.args[0]} did not start: {output}")


@contextmanager
def serving(commands: Sequence[tuple[Sequence[str], str]]) -> Iterator[list[str]]:
    """Start every ``(argv, ready_url)`` at once, wait (bounded) until each answers 200."""
    with ExitStack() as stack:
        started = [(stack.enter_context(_process(argv)), url) for argv, url in commands]
        deadline = time.monotonic() + STARTUP_SECONDS
        for (proc, log), url in started:
            _wait_ready(proc, log, url, deadline)
        yield [url for _, url in commands]


@contextmanager
def chroma_server(data_dir: Path, port: int | None = None) -> Iterator[str]:
    """``chroma run --path data_dir`` on ``port`` (default: a free one); yields its URL."""
    chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = port or free_port()
    argv = [chroma, "run", "--path", str(data_dir), "--host", "127.0.0.1", "--port", str(port)]
    with serving([(argv, f"http://127.0.0.1:{port}/api/v2/heartbeat")]):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def serve_replicas(index_dir: Path, chroma_url: str, count: int) -> Iterator[list[str]]:
    """``count`` processes of ``llama-index-video serve`` over one index; yields their URLs."""
    ports = [free_port() for _ in range(count)]
    commands = [
        (
            [
                sys.executable,
                "-m",
                "llama_index_video.cli.main",
                "serve",
                "--index",
                str(index_dir),
                "--chroma-url",
                chroma_url,
                "--port",
                str(port),
                "--llm",
                "none",
            ],
            f"http://127.0.0.1:{port}/api/health",
        )
        for port in ports
    ]
    with serving(commands):
        yield [f"http://127.0.0.1:{port}" for port in ports]
