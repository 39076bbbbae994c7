"""The console script: what it prints and its exit status are :func:`main`'s, and
shutting down fast leaves nothing of a read-only command behind."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from llama_index_video.cli.main import EXIT_ERROR, main

QUERY = "How much ultraviolet C radiation is absorbed?"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, example_index) -> Path:
    folder = tmp_path_factory.mktemp("console") / "index"
    shutil.copytree(example_index.path, folder)
    return folder


def console(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command as the ``llama-index-video`` executable runs it, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "llama_index_video.cli.main", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def test_search_prints_what_main_prints(capsys, index_dir):
    code = main(["search", QUERY, "--index", str(index_dir), "--json"])
    expected = capsys.readouterr().out
    done = console("search", QUERY, "--index", str(index_dir), "--json")
    assert (done.returncode, code) == (0, 0), done.stderr
    assert json.loads(done.stdout) == json.loads(expected) != []
    assert done.stdout == expected  # every byte, the last line included


def test_a_failing_search_exits_with_its_status_and_one_line(tmp_path):
    done = console("search", "anything", "--index", str(tmp_path / "nowhere"))
    assert done.returncode == EXIT_ERROR
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "no index here" in done.stderr


def test_a_read_only_folder_leaves_no_private_copy_behind(index_dir, read_only_copy, tmp_path):
    shared = read_only_copy(index_dir)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    argv = ("--debug", "search", QUERY, "--index", str(shared), "--json")
    done = console(*argv, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert "searching a private copy" in done.stderr
    assert json.loads(done.stdout)
    assert list(scratch.glob("llama-index-video-*")) == []  # the atexit clean-up ran


def test_main_leaves_the_callers_garbage_collector_alone(capsys, index_dir):
    main(["search", QUERY, "--index", str(index_dir), "--json"])
    capsys.readouterr()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_installed_executable_is_the_console_entry():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["llama-index-video"] == "llama_index_video.cli.main:console"
