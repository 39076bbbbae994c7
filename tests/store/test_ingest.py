"""Ingest is incremental, idempotent and resumable; nothing indexed is lost."""

from __future__ import annotations

import shutil

import pytest
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index_video import schema
from llama_index_video.errors import IndexCompatibilityError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from tests_support import HANDBOOK, TEAM_SYNC


@pytest.fixture
def folder(tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(TEAM_SYNC, media / "team_sync.mp3")
    shutil.copy(HANDBOOK, media / "handbook.md")
    return media


@pytest.fixture
def open_index(tmp_path, script_transcriber, embed_model):
    """Indexes that hear the narration script: these tests are about the store, not ASR."""
    opened = []

    def open_(**options):
        path = tmp_path / "index"
        reader = VideoReader(media_dir=path / "media", transcriber=script_transcriber)
        index = VideoIndex(path, embed_model=embed_model, reader=reader, **options)
        opened.append(index)
        return index

    yield open_
    for index in opened:
        index.close()


def _rows(index):
    return index.vector_store._collection.get(include=["metadatas"])


def _ids_of(index, file_name):
    rows = _rows(index)
    return [
        i
        for i, m in zip(rows["ids"], rows["metadatas"], strict=True)
        if m["file_name"] == file_name
    ]


def test_second_ingest_changes_nothing(folder, open_index):
    index = open_index()
    first = index.ingest([folder])
    assert [f.outcome for f in first.files] == ["indexed", "indexed"]
    before = _rows(index)
    second = open_index().ingest([folder])
    assert [(f.outcome, f.reason) for f in second.files] == [("skipped", "unchanged")] * 2
    after = _rows(index)
    assert sorted(after["ids"]) == sorted(before["ids"])
    assert len(after["ids"]) == sum(f.node_count for f in first.files)


def test_changed_file_replaces_its_nodes_without_orphans(folder, open_index):
    index = open_index()
    index.ingest([folder])
    old_ids = set(_ids_of(index, "handbook.md"))
    notes = folder / "handbook.md"
    notes.write_text(notes.read_text() + "\n## Holidays\nThe office is closed on 24 December.\n")
    report = index.ingest([folder])
    assert {f.path.name: f.outcome for f in report.files} == {
        "handbook.md": "indexed",
        "team_sync.mp3": "skipped",
    }
    handbook = _ids_of(index, "handbook.md")
    assert handbook and not set(handbook) & old_ids
    ids = _rows(index)["ids"]
    assert len(ids) == len(set(ids))
    assert "24 December" in index.search("When is the office closed?")[0].text


def test_moved_file_is_not_indexed_twice_and_is_found_where_it_is(folder, open_index, tmp_path):
    index = open_index()
    index.ingest([folder])
    count = len(_rows(index)["ids"])
    moved = tmp_path / "archive" / "sync renamed.mp3"
    moved.parent.mkdir()
    shutil.move(folder / "team_sync.mp3", moved)
    report = index.ingest([moved])
    assert report.files[0].outcome == "skipped"
    assert len(_rows(index)["ids"]) == count
    hit = index.search("Who owns the migration to the new billing provider?")[0]
    assert hit.source == str(moved)
    assert hit.url.startswith(str(moved) + "#t=")


def test_failed_file_is_reported_kept_apart_and_retried(folder, open_index):
    broken = folder / "broken.mp4"
    broken.write_bytes(b"not a video at all" * 100)
    index = open_index()
    report = index.ingest([folder])
    outcomes = {f.path.name: f for f in report.files}
    assert outcomes["broken.mp4"].outcome == "failed"
    assert "not a readable audio or video file" in outcomes["broken.mp4"].reason
    assert outcomes["team_sync.mp3"].outcome == "indexed" and not report.ok
    shutil.copy(TEAM_SYNC, broken.with_suffix(".mp3"))
    broken.unlink()
    retry = index.ingest([folder])
    assert {f.path.name: f.outcome for f in retry.files}["broken.mp3"] == "skipped"


def test_interrupted_ingest_resumes_without_duplicates(
    folder, tmp_path, script_transcriber, embed_model
):
    path = tmp_path / "index"
    reader = VideoReader(media_dir=path / "media", transcriber=script_transcriber)

    def interrupt(file, stage, done, total):
        if stage == "embed" and done < total:
            raise KeyboardInterrupt

    index = VideoIndex(path, embed_model=embed_model, reader=reader)
    index_nodes = reader.read(HANDBOOK).nodes
    assert len(index_nodes) > 1, "the handbook must need more than one batch"
    from llama_index_video.store.ingest import Ingestor

    with pytest.raises(KeyboardInterrupt):
        Ingestor(index.index, index.manifest, reader, batch_size=1, progress=interrupt).ingest(
            [folder / "handbook.md"]
        )
    assert len(_rows(index)["ids"]) == 1  # one batch landed before the interruption
    report = index.ingest([folder])
    assert {f.path.name: f.outcome for f in report.files}["handbook.md"] == "indexed"
    ids = _rows(index)["ids"]
    assert len(ids) == len(set(ids)) == sum(f.node_count for f in report.files)
    index.close()


def test_any_vector_store_works_with_the_docstore_postprocessor(
    tmp_path, script_transcriber, embed_model
):
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=script_transcriber)
    index = VideoIndex(
        tmp_path / "mem", embed_model=embed_model, vector_store=SimpleVectorStore(), reader=reader
    )
    index.ingest([TEAM_SYNC])
    hits = index.search("When is the release of version 2.4 planned?")
    assert hits and hits[0].modality == "transcript"
    assert hits[0].start <= 6.0 + 1.0 and hits[0].end >= 9.9 - 1.0
    assert "March" in " ".join(c.text for c in hits[0].context)
    index.close()


def test_opening_with_another_embedding_model_is_refused(folder, open_index, tmp_path):
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL
    from llama_index_video.weights import offline_weights

    index = open_index()
    index.ingest([folder / "handbook.md"])
    index.close()
    other = tmp_path / "other-model"
    weights = offline_weights("sentence-transformers", DEFAULT_LOCAL_MODEL)
    assert weights is not None
    shutil.copytree(weights.locate(), other)
    with pytest.raises(IndexCompatibilityError, match="built with embedding model"):
        VideoIndex(tmp_path / "index", embed_model=HuggingFaceEmbedding(model_name=str(other)))


def test_index_from_a_newer_format_is_refused(folder, open_index, tmp_path, embed_model):
    index = open_index()
    index.ingest([folder / "handbook.md"])
    index.manifest.set_meta("format", "99")
    index.close()
    with pytest.raises(IndexCompatibilityError, match="index format 99"):
        VideoIndex(tmp_path / "index", embed_model=embed_model)


def test_metadata_in_the_store_is_flat(folder, open_index):
    index = open_index()
    index.ingest([folder])
    for meta in _rows(index)["metadatas"]:
        assert meta[schema.CONTENT_HASH]
        assert all(isinstance(v, (str, int, float, bool)) for v in meta.values())
        assert "base64" not in meta.get("_node_content", "")
