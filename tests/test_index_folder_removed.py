"""A long-lived ``VideoIndex`` (as ``serve`` holds) whose index folder is removed under
it, and made again by an ``ingest`` of other files.

The writers are real ``ingest`` processes. While the folder was being removed (its lock
file gone, the rest not yet), a reader reading private copies copied what was left: a
manifest without its vectors, and every search after failed with ``IndexCorruptError``
(``serve``: 503) until a writer finished again. A folder made again counted its writers
from 1 again: a reader that had loaded the old folder's first version took the new
folder's first for it, and kept answering from the removed folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llama_index_video.index import VideoIndex

PUMPS = "# Pumps\n\nThe circulation pump is serviced every spring."
VALVES = "# Valves\n\nThe safety valve is tested every autumn."


def _ingest(index_dir: Path, path: Path) -> None:
    argv = ["ingest", str(path), "--index", str(index_dir), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "llama_index_video.cli.main", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _found(index: VideoIndex, query: str) -> list[str]:
    return sorted({Path(hit.source).name for hit in index.search(query, top_k=3)})


def test_a_reader_answers_from_its_version_while_the_folder_is_removed(tmp_path, embed_model):
    index_dir, pumps = tmp_path / "index", tmp_path / "pumps.md"
    pumps.write_text(PUMPS)
    _ingest(index_dir, pumps)
    app = VideoIndex(index_dir, embed_model=embed_model, snapshot_reads=True)
    try:
        assert _found(app, "when is the pump serviced") == ["pumps.md"]
        (index_dir / "write.lock").unlink()  # removed part way: the lock file and vectors
        shutil.rmtree(index_dir / "chroma")
        assert _found(app, "when is the pump serviced") == ["pumps.md"]
        shutil.rmtree(index_dir)
        assert _found(app, "when is the pump serviced") == ["pumps.md"]
    finally:
        app.close()


@pytest.mark.parametrize("snapshot_reads", [True, False])
def test_a_reader_of_a_folder_removed_and_made_again_reads_the_new_one(
    tmp_path, embed_model, snapshot_reads
):
    index_dir, pumps, valves = tmp_path / "index", tmp_path / "pumps.md", tmp_path / "valves.md"
    pumps.write_text(PUMPS)
    valves.write_text(VALVES)
    _ingest(index_dir, pumps)
    app = VideoIndex(index_dir, embed_model=embed_model, snapshot_reads=snapshot_reads)
    try:
        assert _found(app, "when is the pump serviced") == ["pumps.md"]
        shutil.rmtree(index_dir)
        _ingest(index_dir, valves)
        assert _found(app, "when is the safety valve tested") == ["valves.md"]
    finally:
        app.close()
