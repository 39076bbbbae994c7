"""``serve`` over an index folder this process may only read: it answers, follows what
the folder's owner ingests, and never writes there.

The folder is really read-only (see ``ReadOnlyCopies`` in ``tests/conftest.py``), in the
two states an operator finds it: left by a process that still has it open (SQLite's
``-wal`` and ``-shm`` files present) and closed cleanly (no ``-shm``: SQLite can only
read the manifest as immutable). Times come from the narration script of
``ozone_explainer.mp4``, which the example index's transcriber hears exactly.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from llama_index_video.service.server import app_for_folder
from llama_index_video.store.manifest import Manifest
from tests.service.conftest import running
from tests_support import OZONE, folder_state

UVC = "how much ultraviolet C radiation is absorbed"
UVC_AT = 29.5  # "It absorbs one hundred percent of ultraviolet C radiation."
NOTE = "The purple zebra crossing on Elm Street is repainted every Tuesday by volunteers."
ZEBRA = "when is the purple zebra crossing repainted"
CLI = (sys.executable, "-m", "llama_index_video.cli.main")
SQLITE_SIDE_FILES = ("manifest.sqlite-wal", "manifest.sqlite-shm")


@pytest.fixture(params=["open", "closed"])
def served_folder(request, example_index, read_only_copy, tmp_path) -> Path:
    """A read-only copy of the example index, as a writer left it open or closed cleanly.

    The state is made here, not inherited: whether the shared example index still has
    its ``-wal``/``-shm`` files depends on the tests that ran before. "open" is a copy
    taken while a writer held the manifest (as after a killed ingest): the side files
    are there and no one holds them.
    """
    staging, source = tmp_path / "staging", tmp_path / "source"
    shutil.copytree(example_index.path, staging)
    writer = Manifest(staging / "manifest.sqlite")  # a writer's connection makes -wal/-shm
    if request.param == "open":
        shutil.copytree(staging, source)
    writer.close()  # the last connection removes -wal/-shm
    if request.param == "closed":
        shutil.copytree(staging, source)
    assert all((source / name).exists() == (request.param == "open") for name in SQLITE_SIDE_FILES)
    folder = read_only_copy(source)
    with pytest.raises(OSError):
        (folder / "probe").write_text("")  # really read-only
    return folder


def test_the_service_answers_over_a_read_only_index_and_writes_nothing(served_folder):
    before = folder_state(served_folder)
    app = app_for_folder(served_folder)
    live = app.state.live
    try:
        with running(app) as url, httpx.Client(base_url=url) as client:
            health = client.get("/api/health").json()
            assert (health["files"], health["live_reload"]) == (4, True)
            library = client.get("/api/library").json()
            assert len(library) == 4 and str(OZONE) in {entry["source"] for entry in library}

            hits = client.get("/api/search", params={"q": UVC}).json()
            best = hits[0]
            assert best["source"] == str(OZONE)
            assert best["start"] <= UVC_AT <= best["end"]
            assert client.head(best["media_url"]).status_code == 200
            frame = client.get(best["frame_url"])
            assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
            answer = client.post("/api/ask", json={"question": UVC}).json()
            assert answer["citations"][0]["source"] == str(OZONE)

            assert live.refresh() is False  # nothing changed: the watcher only reads
            assert client.get("/api/search", params={"q": UVC}).json() == hits
    finally:
        live.close()
    assert folder_state(served_folder) == before


def test_what_the_owner_ingests_is_served_without_a_restart(
    served_folder, read_only_copy, tmp_path
):
    note = tmp_path / "zebra.txt"
    note.write_text(NOTE)
    app = app_for_folder(served_folder)
    live = app.state.live
    try:
        with running(app) as url, httpx.Client(base_url=url) as client:
            assert client.get("/api/health").json()["files"] == 4
            with read_only_copy.owner(served_folder) as writable:
                subprocess.run(
                    [*CLI, "ingest", str(note), "--index", str(writable), "--quiet"],
                    check=True,
                    capture_output=True,
                    timeout=240,
                )
            owned = folder_state(served_folder)
            assert live.refresh() is True
            hits = client.get("/api/search", params={"q": ZEBRA}).json()
            assert hits and hits[0]["source"] == str(note) and hits[0]["text"] == NOTE
            assert client.get("/api/health").json()["files"] == 5
            assert live.refresh() is False
    finally:
        live.close()
    assert folder_state(served_folder) == owned


def test_the_serve_command_starts_over_a_read_only_index(served_folder, spawn):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    before = folder_state(served_folder)
    server = spawn("serve", "--index", str(served_folder), "--port", str(port), "--llm", "none")
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while True:
        assert server.poll() is None, server.communicate()[1]
        try:
            health = httpx.get(f"{url}/api/health").json()
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "serve did not answer"
            time.sleep(0.5)
    assert health["files"] == 4
    best = httpx.get(f"{url}/api/search", params={"q": UVC}).json()[0]
    assert best["source"] == str(OZONE) and best["start"] <= UVC_AT <= best["end"]
    server.terminate()
    _, err = server.communicate(timeout=60)
    assert "Traceback" not in err
    assert folder_state(served_folder) == before
