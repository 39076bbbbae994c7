"""Index folders for the storage tests: small text-only indexes, built once and copied."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from llama_index_video.cli.main import main
from tests_support import HANDBOOK

NOTES = """# Release notes

## Version 2.4

Version 2.4 ships the new billing provider and the audit log export.

## Version 2.5

Version 2.5 moves search to the new cluster and retires the old reports page.
"""


@pytest.fixture(scope="session")
def text_folder(tmp_path_factory) -> Path:
    """Two Markdown files with known content."""
    folder = tmp_path_factory.mktemp("texts")
    shutil.copy(HANDBOOK, folder / "handbook.md")
    (folder / "release_notes.md").write_text(NOTES)
    return folder


@pytest.fixture(scope="session")
def built_index(tmp_path_factory, text_folder) -> Path:
    """An index of ``text_folder`` made by the CLI; copy it before changing it."""
    folder = tmp_path_factory.mktemp("built") / "index"
    assert main(["ingest", str(text_folder), "--index", str(folder), "--quiet"]) == 0
    return folder


@pytest.fixture
def index_copy(built_index, tmp_path) -> Path:
    """A private copy of ``built_index`` (a new path: Chroma's per-process cache is cold)."""
    target = tmp_path / "index"
    shutil.copytree(built_index, target)
    return target


@pytest.fixture
def run(capsys) -> Callable[..., tuple[int, str, str]]:
    """Run the command line in this process: ``(exit status, stdout, stderr)``."""

    def run_(*argv: str) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run_
