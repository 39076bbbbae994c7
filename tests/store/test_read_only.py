"""An index this process may not write is searched, never written; ingest says so in one line.

As root (CI containers) the index is a read-only bind mount (writes fail with EROFS, as
on a read-only share); as any other user, a copy whose write permissions were removed
(EACCES, as for another user's folder). Either way the files are really read-only for
the process: no mocking.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

import pytest

QUESTION = "When do production deploys happen?"


@pytest.fixture
def read_only_index(built_index, tmp_path):
    """A copy of ``built_index`` this test's processes may read but not write."""
    copy = tmp_path / "copy"
    shutil.copytree(built_index, copy)
    if os.geteuid() != 0:
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        yield copy
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        return
    mounted = tmp_path / "share"
    mounted.mkdir()
    for command in (
        ["mount", "--bind", str(copy), str(mounted)],
        ["mount", "-o", "remount,bind,ro", str(mounted)],
    ):
        done = subprocess.run(command, capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", str(mounted)], check=False)
            pytest.skip(f"cannot make a read-only mount here: {done.stderr.decode().strip()}")
    yield mounted
    subprocess.run(["umount", "-l", str(mounted)], check=False)


def test_read_only_index_is_searchable_and_refuses_ingest(
    read_only_index, run, text_folder, tmp_path, monkeypatch
):
    folder = read_only_index
    with pytest.raises(OSError):
        (folder / "probe").write_text("")  # really read-only
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    before = sorted((p.name, p.stat().st_size) for p in folder.rglob("*"))
    code, out, err = run("search", QUESTION, "--index", folder, "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert hits and "Tuesdays" in hits[0]["text"]
    code, out, err = run("ask", QUESTION, "--index", folder, "--llm", "none")
    assert code == 0 and "Tuesdays" in out, err

    code, out, err = run("ingest", text_folder, "--index", folder, "--quiet")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "read-only here" in err and "ingest needs a writable index folder" in err
    assert sorted((p.name, p.stat().st_size) for p in folder.rglob("*")) == before
