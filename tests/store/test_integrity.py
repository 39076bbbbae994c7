"""The manifest and the store agree, or someone is told; verify checks and repairs."""

from __future__ import annotations

import json
import logging
import shutil

import pytest

from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import open_chroma, release_chroma
from llama_index_video.store.ingest import Ingestor
from llama_index_video.store.live import STOPPED_NOTE
from llama_index_video.store.manifest import Manifest

QUESTION = "When do production deploys happen?"


def _lose_rows(index_dir, *, everything: bool):
    """Empty ``chroma.sqlite3`` or delete the ``chroma`` folder, as an operator might."""
    release_chroma(index_dir / "chroma")
    if everything:
        shutil.rmtree(index_dir / "chroma")
    else:
        (index_dir / "chroma" / "chroma.sqlite3").write_bytes(b"")


@pytest.mark.parametrize("everything", [False, True], ids=["zero-byte database", "no folder"])
def test_lost_rows_are_reported_then_reindexed_by_ingest(run, index_copy, text_folder, everything):
    _lose_rows(index_copy, everything=everything)
    code, out, err = run("search", QUESTION, "--index", index_copy)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "the vector store holds 0 of the" in err and "verify --repair" in err

    code, out, err = run("ingest", text_folder, "--index", index_copy, "--quiet")
    assert code == 0, err
    assert "2 indexed, 0 skipped, 0 failed" in out
    code, out, _ = run("search", QUESTION, "--index", index_copy, "--json")
    assert code == 0 and "Tuesdays" in out
    assert run("verify", "--index", index_copy)[0] == 0


def test_verify_reports_then_repairs(run, index_copy):
    manifest = Manifest(index_copy / "manifest.sqlite")
    damaged = manifest.files("indexed")[0].content_hash
    source = manifest.paths_of(damaged)[0].source
    manifest.close()
    store = open_chroma(index_copy / "chroma")
    rows = store._collection.get(where={schema.CONTENT_HASH: damaged}, include=[])["ids"]
    store._collection.delete(ids=rows[:2])  # two moments of one file lost
    frames = index_copy / "media" / "frames"
    frames.mkdir(parents=True)
    orphan = frames / "0123456789abcdef_000001000.jpg"  # a frame of no indexed file
    partial = frames / "0123456789abcdef_000002000.part"
    orphan.write_bytes(b"jpeg")
    partial.write_bytes(b"half a jpeg")

    code, out, _ = run("verify", "--index", index_copy)
    assert code == 1
    line = next(line for line in out.splitlines() if line.endswith(source))
    assert line.split() == [
        "2",
        "missing",
        str(len(rows)),
        "listed",
        str(len(rows) - 2),
        "stored",
        *source.split(),
    ]
    assert "orphan frames and clips: 1" in out and "partial files: 1" in out
    assert "verify --repair" in out

    code, out, err = run("verify", "--repair", "--index", index_copy, "--quiet")
    assert code == 0, err
    assert f"indexed  {source}, {len(rows)} moments" in out
    assert not orphan.exists() and not partial.exists()
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 0
    assert out.rstrip().endswith("everything the manifest lists is stored and found by search")


def test_verify_finds_frames_gone_from_media_and_repair_makes_them_again(
    run, tmp_path, embed_model, make_video
):
    media = tmp_path / "media"
    media.mkdir()
    make_video(media / "slides.mp4", [(2.0, (200, 0, 0)), (2.0, (0, 0, 200))], tone=False)
    folder = tmp_path / "index"
    reader = VideoReader(
        media_dir=folder / "media", frames=FrameSamplingOptions(interval=1.0), ocr="off"
    )
    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    assert index.ingest([media]).ok
    index.close()
    gone = sorted((folder / "media" / "frames").iterdir())[0]
    gone.unlink()  # deleted by hand, or by a clean-up of the disk

    code, out, _ = run("verify", "--index", folder)
    assert code == 1
    line = next(line for line in out.splitlines() if line.endswith("slides.mp4"))
    assert line.split()[:3] == ["1", "frames", "lost"]
    assert "files with missing moments or frames: 1" in out

    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    try:
        check, report = index.verify(repair=True)
        assert [source.lost_frames for source in check.damaged] == [1]
        assert report is not None and report.ok and gone.is_file()
        assert index.verify()[0].ok
    finally:
        index.close()


def _interrupt_when_stored(file, stage, done, total):
    if stage == "embed" and done >= total:  # every new row is in, nothing committed yet
        raise KeyboardInterrupt


def test_half_written_runs_are_invisible(text_folder, embed_model, tmp_path):
    notes = tmp_path / "handbook.md"
    shutil.copy(text_folder / "handbook.md", notes)
    index = VideoIndex(tmp_path / "index", embed_model=embed_model)
    index.ingest([notes])
    notes.write_text(notes.read_text().replace("Tuesdays and Thursdays", "Mondays and Wednesdays"))
    ingestor = Ingestor(index.index, index.manifest, index.reader, progress=_interrupt_when_stored)
    with pytest.raises(KeyboardInterrupt):
        ingestor.ingest([notes])  # killed after writing the new version's rows

    reader = VideoIndex(tmp_path / "index", embed_model=embed_model)
    texts = " ".join(hit.text or "" for hit in reader.search(QUESTION, top_k=10))
    assert "Tuesdays" in texts and "Mondays" not in texts  # only the complete old version
    index.ingest([notes])
    texts = " ".join(hit.text or "" for hit in reader.search(QUESTION, top_k=10))
    assert "Mondays" in texts and "Tuesdays and Thursdays" not in texts
    assert reader.verify()[0].ok
    index.close()
    reader.close()


def test_leftovers_of_a_killed_run_are_cleaned_by_the_next_ingest(
    index_copy, text_folder, embed_model
):
    killed = "f" * 64  # a video being indexed when the run was killed; since deleted
    manifest = Manifest(index_copy / "manifest.sqlite")
    manifest.set_file(killed, "indexing")
    manifest.close()
    frames = index_copy / "media" / "frames"
    clips = index_copy / "media" / "clips"
    frames.mkdir(parents=True)
    clips.mkdir(parents=True)
    leftovers = [
        frames / f"{killed[:16]}_000000000.jpg",
        frames / f"{killed[:16]}_000005000.part",
        clips / f".{killed[:16]}_video_000000000-000080000.partial.mp4",
    ]
    for path in leftovers:
        path.write_bytes(b"x")

    index = VideoIndex(index_copy, embed_model=embed_model)
    report = index.ingest([text_folder / "handbook.md"])
    assert [f.outcome for f in report.files] == ["skipped"]
    assert not any(path.exists() for path in leftovers)
    assert index.manifest.file(killed).status == "failed"
    assert index.verify()[0].ok
    index.close()


def _unreachable_rows(index_dir, document) -> int:
    """Leave the rows of ``document`` in the store but out of its vector index, as a
    writer persisting a stale copy of the index did: the vector segment as it was
    before they were added, recorded as holding the whole write log (so nothing replays
    them). Returns how many rows were cut off."""
    import sqlite3

    from llama_index_video.cli.main import main

    release_chroma(index_dir / "chroma")
    (segment,) = [p for p in (index_dir / "chroma").iterdir() if p.is_dir()]
    stale = index_dir.parent / "stale-segment"
    shutil.copytree(segment, stale)
    database = index_dir / "chroma" / "chroma.sqlite3"
    rows = "SELECT COUNT(*) FROM embeddings"
    with sqlite3.connect(database) as db:
        stored = db.execute(rows).fetchone()[0]
    assert main(["ingest", str(document), "--index", str(index_dir), "--quiet"]) == 0
    release_chroma(index_dir / "chroma")
    shutil.rmtree(segment)
    shutil.move(stale, segment)
    with sqlite3.connect(database) as db:  # the segment says it holds the whole log
        db.execute(
            "INSERT OR REPLACE INTO max_seq_id (segment_id, seq_id) "
            "VALUES (?, (SELECT MAX(seq_id) FROM embeddings_queue))",
            (segment.name,),
        )
        return int(db.execute(rows).fetchone()[0]) - stored


def _full_query(index_dir) -> tuple[int, int]:
    """(rows stored, rows a query for as many neighbours as there are rows finds)."""
    rows = open_chroma(index_dir / "chroma").client
    try:
        stored = rows.get(include=[])["ids"]
        found = rows.query(query_embeddings=[[1.0] * 384], n_results=len(stored), include=[])
        return len(stored), len(set(found["ids"][0]) & set(stored))
    finally:
        release_chroma(index_dir / "chroma")


def test_verify_reports_rows_search_cannot_reach_and_repair_embeds_them_again(
    run, index_copy, tmp_path
):
    manual = tmp_path / "manual.md"
    manual.write_text("\n\n".join(f"## {n}\n\nValve {n} opens at {n} bar." for n in range(40)))
    cut = _unreachable_rows(index_copy, manual)
    stored, found = _full_query(index_copy)
    assert cut == 40 and found == stored - 40  # listed and counted, never found

    code, out, _ = run("verify", "--index", index_copy)
    assert code == 1, out
    assert "unreachable rows (stored, but search cannot find them): 40" in out
    counts = [line for line in out.splitlines() if " listed " in line]
    assert len(counts) == 3 and all(line.startswith("ok ") for line in counts)  # they agree

    code, out, err = run("verify", "--repair", "--index", index_copy, "--quiet")
    assert code == 0, (out, err)
    assert "40 (embedded again)" in out
    assert _unstored_writes(index_copy) == 0  # every later load reads the graph checked
    assert _full_query(index_copy) == (stored, stored)
    code, out, _ = run("search", "Valve 17 opens at 17 bar", "--index", index_copy, "--json")
    assert code == 0 and "Valve 17 opens" in out
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 0, out


def _unstored_writes(index_dir) -> int:
    """Writes in Chroma's log its stored vector index does not hold yet: each process
    that loads the folder builds them into its vector index anew."""
    import sqlite3

    release_chroma(index_dir / "chroma")
    with sqlite3.connect(index_dir / "chroma" / "chroma.sqlite3") as db:
        return db.execute(
            "SELECT COUNT(*) FROM embeddings_queue WHERE seq_id > (SELECT COALESCE(MAX("
            "m.seq_id), 0) FROM max_seq_id m JOIN segments s ON s.id = m.segment_id "
            "WHERE s.scope = 'VECTOR')"
        ).fetchone()[0]


def test_a_repair_that_cannot_make_a_row_reachable_says_so_and_fails(run, index_copy, monkeypatch):
    """A row Chroma's graph leaves unlinked however often it is stored again (injected:
    a reachability check that always misses it) is reported, and the repair fails."""
    from llama_index_video.store import integrity
    from llama_index_video.store.collection import chroma_collection

    rows = open_chroma(index_copy / "chroma").client
    stuck = rows.get(limit=1, include=[])["ids"][0]
    release_chroma(index_copy / "chroma")

    def misses_one(store):
        return None if chroma_collection(store) is None else [stuck]

    monkeypatch.setitem(integrity.REACHABILITY_CHECKS, "unlinked", misses_one)
    code, out, err = run("verify", "--repair", "--index", index_copy, "--quiet")
    assert code == 1, (out, err)
    assert "not repaired: 1 stored moments search still cannot reach" in out
    code, out, _ = run("verify", "--index", index_copy)
    assert code == 1 and "unreachable rows (stored, but search cannot find them): 1" in out


def test_ingest_first_embeds_again_rows_search_cannot_reach(run, index_copy, tmp_path, caplog):
    manual = tmp_path / "manual.md"
    manual.write_text("\n\n".join(f"## {n}\n\nPump {n} runs at {n} rpm." for n in range(30)))
    _unreachable_rows(index_copy, manual)
    with caplog.at_level(logging.WARNING, logger="llama_index_video.store.ingest"):
        code, out, err = run("ingest", manual, "--index", index_copy, "--quiet")
    assert code == 0 and "0 indexed, 1 skipped" in out, (out, err)
    assert "30 stored moment(s) cannot be found by search" in caplog.text
    stored, found = _full_query(index_copy)
    assert found == stored


@pytest.mark.parametrize("command", ["remove", "prune"])
def test_remove_and_prune_end_as_ingest_does(run, index_copy, embed_model, tmp_path, command):
    """Deleting rows is a write like any other: the vector index is stored whole after
    it, and rows search cannot reach are embedded again."""
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe night shift checks the boiler at two.\n")
    assert run("ingest", notes, "--index", index_copy, "--quiet")[0] == 0
    manual = tmp_path / "manual.md"
    manual.write_text("\n\n".join(f"## {n}\n\nGate {n} shuts at {n} psi." for n in range(30)))
    assert _unreachable_rows(index_copy, manual) == 30
    if command == "remove":
        code, out, err = run("remove", notes, "--index", index_copy)
        assert code == 0, (out, err)
    else:  # ``ingest --prune`` ingests after it, which relinks anyway: the prune alone
        notes.unlink()
        index = VideoIndex(index_copy, embed_model=embed_model)
        assert index.prune() == [str(notes)]
        index.close()
    assert _unstored_writes(index_copy) == 0
    stored, found = _full_query(index_copy)
    assert found == stored


def test_an_ingest_that_leaves_a_row_unreachable_says_so_and_fails(run, tmp_path, monkeypatch):
    """The same injected miss at the end of an ``ingest``: the command named a run that
    left rows search cannot reach as a success (exit 0, no line) before."""
    from llama_index_video.store import integrity
    from llama_index_video.store.collection import chroma_collection
    from tests_support import HANDBOOK

    def misses_one(store):
        collection = chroma_collection(store)
        return None if collection is None else collection.get(limit=1, include=[])["ids"]

    monkeypatch.setitem(integrity.REACHABILITY_CHECKS, "unlinked", misses_one)
    code, out, err = run("ingest", HANDBOOK, "--index", tmp_path / "idx", "--quiet")
    assert code == 1, (out, err)
    assert "1 indexed, 0 skipped, 0 failed" in out
    assert "not repaired: 1 stored moments search still cannot reach" in out


@pytest.mark.parametrize("stopped_live", [False, True], ids=["left over", "a stop goes on from it"])
def test_verify_forgets_indexed_content_no_file_names(run, index_copy, stopped_live):
    """Content an interrupted run of an earlier version left indexed with no path naming
    it was searchable, yet no file's, and verify said ok. A stopped live recording's
    next run goes on from such content, so that is kept."""
    manifest = Manifest(index_copy / "manifest.sqlite")
    answer = next(  # the content that answers QUESTION ("Tuesdays")
        r.content_hash
        for r in manifest.files("indexed")
        if "handbook" in manifest.paths_of(r.content_hash)[0].source
    )
    with manifest.transaction():
        for record in manifest.paths_of(answer):
            manifest.forget_path(record.path)
        if stopped_live:
            note = {"content": answer, "size": 1, "head": "0" * 64, "settled": None}
            manifest.set_meta(f"{STOPPED_NOTE}{'1' * 64}", json.dumps(note))
    manifest.close()
    assert "Tuesdays" in run("search", QUESTION, "--index", index_copy, "--json")[1]

    code, out, _ = run("verify", "--index", index_copy)
    unnamed = "indexed contents no file names (left by an interrupted run): 1"
    assert (code, unnamed in out) == ((0, False) if stopped_live else (1, True))

    code, out, err = run("verify", "--repair", "--index", index_copy, "--quiet")
    assert code == 0, err
    assert (f"{unnamed} (deleted)" in out) is not stopped_live
    found = run("search", QUESTION, "--index", index_copy, "--json")[1]
    assert ("Tuesdays" in found) is stopped_live
    manifest = Manifest(index_copy / "manifest.sqlite")
    assert (manifest.file(answer) is not None) is stopped_live
    manifest.close()
    assert run("verify", "--index", index_copy)[0] == 0
