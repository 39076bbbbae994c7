"""``ingest`` prints each file's line as soon as that file is done, and Ctrl-C keeps them.

The lines came only when the whole run ended: on a folder of long recordings a log
piped to a file stayed empty for the hour, and a run interrupted listed nothing,
though the files it had finished were indexed. Here the run's last input is a link
whose server holds its reply until the test lets it go, so the run is certainly still
going when the folder's lines are read, and when it is interrupted.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from llama_index_video.cli.status import EXIT_INTERRUPTED
from tests.fakes.loopback import LoopbackHTTP
from tests_support import ROOT, stored_rows

SPEECH = ROOT / "tests" / "fixtures" / "speech"
HELD_PATH = "/media/late.mp4"
LINE_SECONDS = 300.0  # a bound for a loaded machine; the first file takes ~10 s on 2 cores
HOLD_SECONDS = 600.0


class _HeldMedia(BaseHTTPRequestHandler):
    """Serves one clip at :data:`HELD_PATH`, once ``release`` is set."""

    body = (SPEECH / "subtitled.mp4").read_bytes()
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path != HELD_PATH:
            self.send_error(404)
            return
        self.release.wait(HOLD_SECONDS)
        self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):  # the interrupted run went away
            self.wfile.write(self.body)


@pytest.fixture
def held_link() -> Iterator[tuple[str, threading.Event]]:
    """A link whose reply waits for the event; the event is set when the test ends."""
    handler = type("Held", (_HeldMedia,), {"release": threading.Event()})
    server = LoopbackHTTP(handler)
    server.start()
    try:
        yield server.url + HELD_PATH, handler.release
    finally:
        handler.release.set()
        server.stop()


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    """A folder of two short real recordings: subtitles in one, speech to recognise in the other."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(SPEECH / "subtitled.mkv", folder / "1_subtitled.mkv")
    shutil.copy(SPEECH / "librivox_en.flac", folder / "2_reading.flac")
    return folder


def _ingest(*inputs: object, index: Path) -> list[str]:
    argv = ["ingest", *map(str, inputs), "--index", str(index), "--no-frames", "--ocr", "off"]
    return [sys.executable, "-m", "llama_index_video.cli.main", *argv]


def _lines(stream: object) -> queue.Queue[str | None]:
    """The lines of ``stream`` as they come, then None at its end."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _moments(line: str) -> int:
    """``indexed  x.mp4, 3 moments (note)`` -> 3."""
    found = re.search(r", (\d+) moments?\b", line)
    assert found, line
    return int(found[1])


def test_lines_come_as_files_finish_and_ctrl_c_keeps_them(recordings, held_link, tmp_path):
    link, release = held_link
    index = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = _ingest(recordings, link, index=index)
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        lines = _lines(child.stdout)
        first = lines.get(timeout=LINE_SECONDS)
        assert first.startswith(f"indexed  {recordings / '1_subtitled.mkv'}, "), first
        assert child.poll() is None  # the link is held: the run cannot have ended
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=LINE_SECONDS) == EXIT_INTERRUPTED
    finally:
        if child.poll() is None:
            child.kill()
    shown = [first, *iter(lambda: lines.get(timeout=LINE_SECONDS), None)]
    error = child.stderr.read()  # type: ignore[union-attr]
    child.stderr.close()  # type: ignore[union-attr]

    assert "Traceback" not in error, error
    assert all(line.startswith("indexed  ") for line in shown), shown  # no summary line
    interrupted = [line for line in error.splitlines() if line.startswith("interrupted")]
    assert interrupted == [
        f"interrupted: {len(shown)} indexed, 0 skipped, 0 failed; "
        "run the same command again to resume"
    ], error

    release.set()
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    done = again.stdout.splitlines()
    inputs = [str(recordings / "1_subtitled.mkv"), str(recordings / "2_reading.flac"), link]
    finished = [line.split()[1].rstrip(",") for line in shown]
    for name, line in zip(inputs, done, strict=False):
        if name in finished:
            assert line == f"skipped  {name} (unchanged)", done
        else:
            assert line.startswith(f"indexed  {name}, "), done
    assert done[len(inputs)] == (
        f"{len(inputs) - len(finished)} indexed, {len(finished)} skipped, 0 failed -> {index}"
    )

    from llama_index_video.index import VideoIndex

    opened = VideoIndex(index)
    try:
        rows = stored_rows(opened.vector_store, index)
    finally:
        opened.close()
    told = [line for line in shown + done if line.startswith("indexed  ")]
    assert len(rows) == sum(_moments(line) for line in told) > 0  # every moment stored once
