"""An index folder's lexical index stays in step with its vectors: ingest, remove, verify."""

from __future__ import annotations

import shutil
import sqlite3

from llama_index_video.index import VideoIndex
from llama_index_video.store.lexical import LEXICAL_FOLDER, WORDS_FILE


def _lexical_ids(folder) -> set[str]:
    with sqlite3.connect(folder / LEXICAL_FOLDER / WORDS_FILE) as db:
        return {row[0] for row in db.execute("SELECT node_id FROM words")}


def _vector_ids(index: VideoIndex) -> set[str]:
    return set(index.vector_store._collection.get(include=[])["ids"])  # type: ignore[attr-defined]


def _built_ids(index: VideoIndex) -> set[str]:
    snapshot = index.lexical.snapshot()
    assert snapshot is not None
    return set(snapshot.ids)


def test_remove_and_reingest_keep_the_lexical_index_on_the_vectors_ids(index_copy, text_folder):
    index = VideoIndex(index_copy)
    try:
        everything = _vector_ids(index)
        assert everything and _lexical_ids(index_copy) == everything == _built_ids(index)
        assert index.remove(text_folder / "release_notes.md") == 1
        left = _vector_ids(index)
        assert left < everything
        assert _lexical_ids(index_copy) == left == _built_ids(index)
        assert index.ingest([text_folder]).ok
        assert _lexical_ids(index_copy) == _vector_ids(index) == everything == _built_ids(index)
        check, _ = index.verify()
        assert check.lexical is not None and check.lexical.ok and check.ok
    finally:
        index.close()


def test_verify_reports_a_lost_lexical_index_and_repair_rebuilds_it(run, index_copy):
    index = VideoIndex(index_copy)
    try:
        everything = _vector_ids(index)
    finally:
        index.close()
    shutil.rmtree(index_copy / LEXICAL_FOLDER)
    code, out, _ = run("verify", "--index", index_copy)
    assert code != 0 and "lexical index: 2 file(s) missing or incomplete" in out
    code, out, _ = run("verify", "--repair", "--index", index_copy)
    assert code == 0 and "(rebuilt)" in out
    assert _lexical_ids(index_copy) == everything
    assert run("verify", "--index", index_copy)[0] == 0
