"""Damaged index files end every command with one line naming the file and what to do:
``verify --repair``, which moves the file aside and rebuilds it."""

from __future__ import annotations

import os

import pytest


def _truncate(path):
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _overwrite(path):
    path.write_bytes(os.urandom(path.stat().st_size))


@pytest.mark.parametrize("damage", [_truncate, _overwrite], ids=["truncated", "garbage"])
@pytest.mark.parametrize("name", ["chroma/chroma.sqlite3", "manifest.sqlite"])
def test_damaged_file_is_one_line_naming_it(run, index_copy, text_folder, name, damage):
    damaged = index_copy / name
    damage(damaged)
    commands = [
        ("search", "When do production deploys happen?"),
        ("ask", "When do production deploys happen?"),
        ("ingest", str(text_folder), "--quiet", "--no-wait"),
    ]
    for command in commands:
        code, out, err = run(*command, "--index", index_copy)
        assert code == 2, (command, out, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith(f"error: {damaged}: damaged (")
        assert f"run 'llama-index-video verify --repair --index {index_copy}'" in err, err
    code, out, err = run("verify", "--repair", "--index", index_copy)
    assert code == 0 and "moved aside to" in out, (out, err)
    code, out, err = run("verify", "--index", index_copy)
    assert code == 0 and out.startswith("ok"), (out, err)


@pytest.mark.parametrize("where", ["a_file", "a_file/index", "/proc/index"])
def test_an_index_folder_that_cannot_be_made_is_one_line_naming_it(run, tmp_path, where):
    (tmp_path / "a_file").write_text("not a folder", encoding="utf-8")
    note = tmp_path / "note.md"
    note.write_text("# Release\n\nVersion 2.4 ships on Friday.\n", encoding="utf-8")
    folder = where if where.startswith("/") else str(tmp_path / where)
    code, out, err = run("ingest", note, "--index", folder, "--quiet")
    assert code != 0 and "Traceback" not in out + err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {folder}: no index folder can be made here (")
