"""The service picks up what a separate ``ingest`` process adds, without a restart."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from llama_index_video.service import live
from llama_index_video.service.live import IndexVersions
from llama_index_video.service.server import app_for_folder
from llama_index_video.store.lock import WriterLock
from tests.service.conftest import LOOPBACK

NOTE = "The purple zebra crossing on Elm Street is repainted every Tuesday by volunteers."
QUERY = "when is the purple zebra crossing repainted"
CLI = (sys.executable, "-m", "llama_index_video.cli.main")


def test_content_ingested_by_another_process_is_found_without_a_restart(example_index, tmp_path):
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    note = tmp_path / "zebra.txt"
    note.write_text(NOTE)
    app = app_for_folder(folder)
    with TestClient(app, base_url=LOOPBACK) as client:
        health = client.get("/api/health").json()
        assert (health["files"], health["live_reload"]) == (4, True)
        before = client.get("/api/search", params={"q": QUERY}).json()
        assert all(hit["source"] != str(note) for hit in before)
        subprocess.run(
            [*CLI, "ingest", str(note), "--index", str(folder), "--quiet"],
            check=True,
            capture_output=True,
            timeout=240,
        )
        hits = client.get("/api/search", params={"q": QUERY}).json()
        assert hits and hits[0]["source"] == str(note)
        assert hits[0]["text"] == NOTE
        assert client.get("/api/health").json()["files"] == 5
        # Nothing changed since: no further reopen.
        assert app.state.live.refresh() is False
    app.state.live.close()


def test_a_version_a_writer_overtook_is_followed_as_soon_as_that_writer_finishes(
    example_index, tmp_path, monkeypatch
):
    """The copy of a finished version was dropped because the next writer took the lock
    meanwhile; the service then waited 5 s before looking again, so a search right
    after that writer finished was answered from the version before both."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    opened: list[Path] = []
    versions = IndexVersions(folder, lambda path: opened.append(path) or path)
    versions.first()
    real_snapshot = live.take_snapshot
    overtaken = iter([True])

    def snapshot_overtaken_once(index_dir: Path):
        if next(overtaken, False):
            return None  # a writer took the lock while the folder was being copied
        return real_snapshot(index_dir)

    monkeypatch.setattr(live, "take_snapshot", snapshot_overtaken_once)
    try:
        _write(folder)
        assert versions.changed() and versions.next() is None
        _write(folder)
        assert versions.changed()
        assert versions.next() is not None and len(opened) == 2
        assert not versions.changed()
    finally:
        versions.close()


def _write(folder: Path) -> None:
    with WriterLock(folder) as lock:
        lock.acquire(wait=0)
