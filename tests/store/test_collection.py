"""The Chroma collection of an index folder, opened once per folder and process."""

from __future__ import annotations

from pathlib import Path

from llama_index_video.store.collection import (
    chroma_collection,
    open_chroma,
    open_here,
    release_chroma,
)


def test_a_relative_folder_is_the_one_in_the_current_directory(tmp_path, monkeypatch):
    """Chroma keeps one database per path string in a process: ``idx/chroma`` opened
    again from another directory got the first directory's rows (an in-process CLI run
    from one folder, then another, read and wrote the wrong index)."""
    for name, rows in (("a", 1), ("b", 0)):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        collection = chroma_collection(open_chroma(Path("idx/chroma")))
        if rows:
            collection.add(ids=["boiler"], embeddings=[[1.0, 0.0]], documents=["Kessler"])
        assert collection.count() == rows, name
    for name in ("a", "b"):  # known, and released, by its absolute path too
        assert open_here(tmp_path / name / "idx" / "chroma")
        release_chroma(tmp_path / name / "idx" / "chroma")
        assert not open_here(tmp_path / name / "idx" / "chroma")
