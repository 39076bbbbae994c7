"""A full disk stops ingest with "disk full", and the index stays consistent.

The index lives on a real, tiny tmpfs filled up with a ballast file, so Chroma and
SQLite hit ENOSPC themselves. Mounting needs root (CI runs as root); elsewhere the
test cannot create a full disk and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from llama_index_video.store.collection import release_chroma

HEADROOM = 96 * 1024


@pytest.fixture
def tiny_disk(tmp_path):
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


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
    assert "disk full; free some space and run the same ingest again" in err

    code, out, _ = run("search", "When do production deploys happen?", "--index", index_dir)
    assert code == 0 and "Tuesdays" in out  # what was complete is still there

    os.unlink(ballast)
    release_chroma(index_dir / "chroma")  # as a new process would: Chroma's state is per process
    code, out, err = run("ingest", manual, "--index", index_dir, "--quiet")
    assert code == 0 and "1 indexed" in out, err
    assert run("verify", "--index", index_dir)[0] == 0
