"""Damage to the index folder is said in one line, and a repair never makes it worse.

A 0-byte or wiped ``manifest.sqlite`` beside a full vector store read as an empty index,
and ``verify --repair`` then deleted every row as a stray (exit 0). A repair that cannot
re-index a file because its source is gone said nothing and exited 0.
"""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from llama_index_video.store.collection import open_chroma, release_chroma, row_total

QUESTION = "When do production deploys happen?"


def rows(index_dir) -> int:
    release_chroma(index_dir / "chroma")
    count = row_total(open_chroma(index_dir / "chroma", "video_moments"))
    release_chroma(index_dir / "chroma")
    assert count is not None
    return count


def zero_bytes(index_dir) -> None:
    for extra in ("manifest.sqlite-wal", "manifest.sqlite-shm"):
        (index_dir / extra).unlink(missing_ok=True)
    (index_dir / "manifest.sqlite").write_bytes(b"")


def wiped(index_dir) -> None:
    with sqlite3.connect(index_dir / "manifest.sqlite") as db:
        db.executescript("DELETE FROM files; DELETE FROM paths; DELETE FROM meta;")


@pytest.mark.parametrize("damage", [zero_bytes, wiped], ids=["0-byte", "wiped"])
def test_a_lost_manifest_is_damage_and_repair_records_it_again_from_the_rows(
    run, index_copy, text_folder, damage
):
    stored = rows(index_copy)
    damage(index_copy)
    for command in (["search", QUESTION], ["list"]):
        code, out, err = run(*command, "--index", index_copy)
        assert code == 2 and out == "" and err.count("\n") == 1, (command, err)
        assert f"lists no file, but the vector store holds {stored} moments" in err
        assert "verify --repair" in err
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 1 and "the manifest was emptied or lost" in out
    assert rows(index_copy) == stored

    code, out, err = run("verify", "--repair", "--index", index_copy)
    assert code == 0, (out, err)
    assert "(recorded again from them)" in out and rows(index_copy) == stored
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 0 and out.startswith("ok")
    code, out, _ = run("list", "--index", index_copy, "--json")
    listed = {entry["path"]: entry for entry in json.loads(out)}
    assert set(listed) == {str(text_folder / "handbook.md"), str(text_folder / "release_notes.md")}
    assert {entry["status"] for entry in listed.values()} == {"indexed"}
    code, out, _ = run("search", QUESTION, "--index", index_copy, "--json")
    assert code == 0 and "Tuesdays" in out
    code, out, _ = run("ingest", text_folder, "--index", index_copy)
    assert code == 0 and "0 indexed, 2 skipped" in out  # hashed again, found unchanged


def test_ingest_on_a_lost_manifest_keeps_the_rows(run, index_copy, text_folder, tmp_path):
    stored = rows(index_copy)
    zero_bytes(index_copy)
    extra = tmp_path / "extra.md"
    extra.write_text("# Parking\n\nVisitors park on level two of the north garage.\n")
    code, out, err = run("ingest", extra, "--index", index_copy, "--quiet")
    assert code == 0, err
    assert rows(index_copy) > stored  # the old rows kept, the new file's added
    code, out, _ = run("search", QUESTION, "--index", index_copy, "--json")
    assert code == 0 and "Tuesdays" in out


def vectors_removed(index_dir) -> None:
    shutil.rmtree(index_dir / "chroma")


def vectors_garbage(index_dir) -> None:
    (index_dir / "chroma" / "chroma.sqlite3").write_bytes(b"this is not a database " * 400)


@pytest.mark.parametrize("lose", [vectors_removed, vectors_garbage], ids=["removed", "garbage"])
def test_repair_says_which_files_it_could_not_restore_and_exits_non_zero(run, tmp_path, lose):
    source = tmp_path / "texts"
    source.mkdir()
    (source / "kept.md").write_text("# Kept\n\nDeploys happen on Tuesdays after the review.\n")
    (source / "gone.md").write_text("# Gone\n\nThe badge office opens at nine on Mondays.\n")
    index_dir = tmp_path / "index"
    assert run("ingest", source, "--index", index_dir, "--quiet")[0] == 0
    release_chroma(index_dir / "chroma")
    lose(index_dir)  # every moment lost ...
    (source / "gone.md").unlink()  # ... and one file's source with them

    code, out, err = run("verify", "--repair", "--index", index_dir)
    assert code == 1, (out, err)
    assert f"indexed  {source / 'kept.md'}" in out
    (gone,) = [line for line in out.splitlines() if line.startswith("failed")]
    assert gone.startswith(f"failed   {source / 'gone.md'}") and "the file is gone" in gone
    code, out, _ = run("search", "When do deploys happen?", "--index", index_dir, "--json")
    assert code == 0 and "Tuesdays" in out


def not_a_database(words) -> None:
    words.write_bytes(b"this is not a database " * 400)


def emptied(words) -> None:
    words.write_bytes(b"")


def tables_dropped(words) -> None:
    with sqlite3.connect(words) as db:
        db.executescript("DROP TABLE words; DROP TABLE meta;")


@pytest.mark.parametrize("damage", [not_a_database, emptied, tables_dropped])
def test_a_damaged_lexical_index_is_rebuilt_by_repair(run, index_copy, damage):
    damage(index_copy / "lexical" / "words.sqlite")
    code, out, err = run("verify", "--index", index_copy)
    assert code == 1 and "lexical index: damaged" in out, (out, err)
    code, out, err = run("verify", "--repair", "--index", index_copy)
    assert code == 0 and "(rebuilt)" in out, (out, err)
    assert run("verify", "--index", index_copy)[0] == 0
    code, out, _ = run("search", '"audit log export"', "--index", index_copy, "--json")
    assert code == 0 and "audit log export" in out  # a quoted phrase: the lexical index


def test_ingest_rebuilds_a_damaged_lexical_index(run, index_copy, tmp_path):
    not_a_database(index_copy / "lexical" / "words.sqlite")
    extra = tmp_path / "extra.md"
    extra.write_text("# Parking\n\nVisitors park on level two of the north garage.\n")
    code, out, err = run("ingest", extra, "--index", index_copy, "--quiet")
    assert code == 0, (out, err)
    assert run("verify", "--index", index_copy)[0] == 0
    code, out, _ = run("search", '"north garage"', "--index", index_copy, "--json")
    assert code == 0 and "north garage" in out


def test_a_repair_interrupted_after_its_clean_up_is_finished_by_the_next(run, tmp_path):
    """The first repair took the files with lost moments out (marked them to be indexed
    again) and was killed before it indexed them: the next `verify` said "ok: 0 files"
    and `verify --repair` left them out for good. Now both see them."""
    from llama_index_video.index import VideoIndex

    source = tmp_path / "texts"
    source.mkdir()
    (source / "kept.md").write_text("# Kept\n\nDeploys happen on Tuesdays after the review.\n")
    index_dir = tmp_path / "index"
    assert run("ingest", source, "--index", index_dir, "--quiet")[0] == 0
    release_chroma(index_dir / "chroma")
    shutil.rmtree(index_dir / "chroma")
    index = VideoIndex(index_dir, snapshot_reads=False)  # writes, as the repair did
    index._ingestor(None).recover(index._check(per_source=True))  # the repair's clean-up
    index.close()  # ... and then the process was killed

    code, out, _ = run("verify", "--index", index_dir)
    assert code == 1 and "files taken out to be indexed again, not back yet: 1" in out
    code, out, _ = run("verify", "--repair", "--index", index_dir)
    assert code == 0 and f"indexed  {source / 'kept.md'}" in out
    assert run("verify", "--index", index_dir)[0] == 0
    code, out, _ = run("search", "When do deploys happen?", "--index", index_dir, "--json")
    assert code == 0 and "Tuesdays" in out
