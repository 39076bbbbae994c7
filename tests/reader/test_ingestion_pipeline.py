"""Recordings through LlamaIndex's ``IngestionPipeline`` with a docstore (issue 10, D6).

Given moments, a pipeline in its default ``UPSERTS`` mode looked up each moment's
``ref_doc_id`` in its docstore, found no hash (it stores hashes by input id) and
re-embedded everything on every run. Given one document per file and the reader as a
transformation, an unchanged file is neither read nor embedded again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import chromadb
import pytest
from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.schema import BaseNode, TransformComponent
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_index_video import schema
from llama_index_video.errors import MediaError, TranscriptionError
from llama_index_video.reader.ingestion_pipeline import READ_ERROR, VideoNodeParser, media_documents
from llama_index_video.reader.video_reader import VideoReader
from tests_support import HANDBOOK, OZONE


class Counter(TransformComponent):
    """Counts the nodes that reach the embedding, passing them on."""

    seen: int = 0

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        self.seen += len(nodes)
        return nodes


def _pipeline(tmp_path, embed_model, strategy=DocstoreStrategy.UPSERTS):
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    store = ChromaVectorStore(chroma_collection=client.get_or_create_collection("moments"))
    counter = Counter()
    reader = VideoReader(media_dir=tmp_path / "media", frames=None)
    pipeline = IngestionPipeline(
        transformations=[VideoNodeParser(reader=reader), counter, embed_model],
        docstore=SimpleDocumentStore(),
        vector_store=store,
        docstore_strategy=strategy,
    )
    return pipeline, counter, store


def _files(subtitled_media):
    return [subtitled_media / OZONE.name, subtitled_media / HANDBOOK.name]


def test_a_second_run_over_unchanged_files_reads_and_embeds_nothing(
    tmp_path, subtitled_media, embed_model
):
    pipeline, counter, store = _pipeline(tmp_path, embed_model)
    first = pipeline.run(documents=media_documents(_files(subtitled_media)))
    stored = store._collection.count()
    assert len(first) == counter.seen == stored > 10

    second = pipeline.run(documents=media_documents(_files(subtitled_media)))
    assert second == [] and counter.seen == stored
    assert store._collection.count() == stored


def test_moments_keep_their_ids_and_name_their_document(tmp_path, subtitled_media, embed_model):
    pipeline, _, _ = _pipeline(tmp_path, embed_model)
    documents = media_documents(
        [subtitled_media / OZONE.name], extra_info={"course": "Atmosphere 101"}
    )
    moments = pipeline.run(documents=documents)
    direct = VideoReader(media_dir=tmp_path / "direct", frames=None).load_data(
        subtitled_media / OZONE.name
    )
    assert [m.node_id for m in moments] == [m.node_id for m in direct]
    assert {m.ref_doc_id for m in moments} == {documents[0].doc_id}
    assert all(m.metadata["course"] == "Atmosphere 101" for m in moments)
    assert all(m.metadata[schema.FILE_NAME] == OZONE.name for m in moments)


def test_a_changed_file_replaces_its_old_moments(tmp_path, subtitled_media, embed_model):
    pipeline, _, store = _pipeline(tmp_path, embed_model)
    notes = subtitled_media / "notes.md"
    notes.write_text("# Ozone\n\nThe ozone layer absorbs ultraviolet light.\n")
    pipeline.run(documents=media_documents([notes]))
    old_ids = set(store._collection.get()["ids"])

    notes.write_text("# Bees\n\nA hive shrinks to about 20,000 bees in winter.\n")
    pipeline.run(documents=media_documents([notes]))
    rows = store._collection.get()
    assert old_ids.isdisjoint(rows["ids"]), "the old version's moments are gone"
    assert rows["ids"] and all("20,000 bees" in text for text in rows["documents"])


class FailingOnce:
    """The narration script, after one transcription that fails (a crash, a full disk)."""

    name = "failing-once"

    def __init__(self, script) -> None:
        self.script = script
        self.calls = 0

    def transcribe(self, audio, *, source=None):
        self.calls += 1
        if self.calls == 1:
            raise TranscriptionError(f"{source}: the speech model crashed")
        return self.script.transcribe(audio, source=source)


def test_a_file_that_failed_is_skipped_then_read_again_next_run(
    tmp_path, embed_model, script_transcriber
):
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    store = ChromaVectorStore(chroma_collection=client.get_or_create_collection("moments"))
    transcriber = FailingOnce(script_transcriber)
    reader = VideoReader(media_dir=tmp_path / "media", frames=None, transcriber=transcriber)
    pipeline = IngestionPipeline(
        transformations=[VideoNodeParser(reader=reader), embed_model],
        docstore=SimpleDocumentStore(),
        vector_store=store,
    )
    files = [OZONE]  # no subtitles beside the example: speech recognition runs

    documents = media_documents(files)
    assert pipeline.run(documents=documents) == []
    assert "the speech model crashed" in documents[0].metadata[READ_ERROR]

    # The same input again: neither the docstore nor the pipeline's cache skips it.
    again = pipeline.run(documents=media_documents(files))
    assert again and {m.metadata[schema.FILE_NAME] for m in again} == {OZONE.name}
    assert store._collection.count() == len(again)
    assert pipeline.run(documents=media_documents(files)) == []


def test_one_bad_file_does_not_stop_the_others(tmp_path, subtitled_media, embed_model):
    pipeline, _, store = _pipeline(tmp_path, embed_model)
    broken = subtitled_media / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    moments = pipeline.run(documents=media_documents([broken, subtitled_media / HANDBOOK.name]))
    assert moments and {m.metadata[schema.FILE_NAME] for m in moments} == {HANDBOOK.name}
    assert store._collection.count() == len(moments)


def test_a_missing_file_is_named_before_any_work(tmp_path):
    with pytest.raises(MediaError, match=r"nowhere\.mp4"):
        media_documents([tmp_path / "nowhere.mp4"])
