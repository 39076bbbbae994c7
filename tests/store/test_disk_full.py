"""A full disk stops every command with "disk full", and the index stays consistent.

The index lives on a real, tiny tmpfs filled up with a ballast file, so Chroma and
SQLite hit ENOSPC themselves. Mounting needs root (CI runs as root); elsewhere the
test cannot create a full disk and says so.
"""

from __future__ import annotations

import os
import shutil

import pytest

from llama_index_video.errors import VideoIndexError
from llama_index_video.store.collection import release_chroma

HEADROOM = 96 * 1024


@pytest.fixture
def tiny_disk(tmpfs):
    return tmpfs("disk", "size=16m")


def _fill(disk, headroom: int):
    ballast = disk / "ballast"
    free = shutil.disk_usage(disk).free
    with ballast.open("wb") as handle:
        handle.truncate(0)
        handle.write(b"\0" * max(0, free - headroom))
    return ballast


def test_disk_full_stops_ingest_in_one_line_and_keeps_the_index(
    tiny_disk, built_index, run, tmp_path
):
    index_dir = tiny_disk / "index"
    shutil.copytree(built_index, index_dir)
    manual = tmp_path / "manual.md"
    manual.write_text(
        "\n\n".join(
            f"## Gauge {n}\n\nGauge {n} reads pressure in hall {n}; log it every hour."
            for n in range(300)
        )
    )
    ballast = _fill(tiny_disk, HEADROOM)
    code, out, err = run("ingest", manual, "--index", index_dir, "--quiet")
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "disk full; free some space and run the same command again" in err

    code, out, _ = run("search", "When do production deploys happen?", "--index", index_dir)
    assert code == 0 and "Tuesdays" in out  # what was complete is still there

    os.unlink(ballast)
    release_chroma(index_dir / "chroma")  # as a new process would: Chroma's state is per process
    code, out, err = run("ingest", manual, "--index", index_dir, "--quiet")
    assert code == 0 and "1 indexed" in out, err
    assert run("verify", "--index", index_dir)[0] == 0


CHROMA_FULL = 2500 * 1024  # room for the lexical words, not for Chroma's compaction


def test_disk_full_is_one_line_for_every_command(tiny_disk, built_index, run, tmp_path):
    index_dir = tiny_disk / "index"
    shutil.copytree(built_index, index_dir)
    manual = tmp_path / "manual.md"
    manual.write_text("\n\n".join(f"## Pump {n}\n\nPump {n} runs at {n} rpm." for n in range(300)))
    ballast = _fill(tiny_disk, CHROMA_FULL)
    commands = [
        ("ingest", manual, "--quiet"),
        ("search", "When do production deploys happen?"),
        ("ask", "When do production deploys happen?", "--llm", "none"),
        ("verify",),
        ("remove", manual),
    ]
    full = []
    for command in commands:
        release_chroma(index_dir / "chroma")  # each command as a new process would
        code, out, err = run(*command, "--index", index_dir)
        assert "Traceback" not in err and code != 70, (command, err)
        if "disk full" in err:
            assert code == 2 and err.count("\n") == 1, (command, err)
            assert "free some space and run the same command again" in err
            full.append(command[0])
    # The ingest always needs the space; whether a later read must write too (Chroma
    # applies its write log on open) depends on how far the failed ingest got, so a
    # read either works or says "disk full" in one line: never a traceback.
    assert full[0] == "ingest", full

    from fastapi.testclient import TestClient

    from llama_index_video.service.server import app_for_folder

    release_chroma(index_dir / "chroma")
    try:
        app = app_for_folder(index_dir)
    except VideoIndexError as exc:  # opening is one line too
        assert "disk full" in str(exc)
    else:
        with TestClient(app, base_url="http://127.0.0.1") as client:  # loopback only
            answer = client.get("/api/search", params={"q": "production deploys"})
        assert answer.status_code in (200, 503), answer.text
        if answer.status_code == 503:
            assert "disk full" in answer.json()["detail"]
        app.state.live.close()

    os.unlink(ballast)
    release_chroma(index_dir / "chroma")
    code, out, err = run("ingest", manual, "--index", index_dir, "--quiet")
    assert code == 0 and "1 indexed" in out, err
    assert run("verify", "--index", index_dir)[0] == 0
