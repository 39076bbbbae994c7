"""Search and the postprocessor over another LlamaIndex vector store: Qdrant (in memory).

Nothing here is Chroma-specific: the store only has to support metadata filters and
id lookups, which Qdrant's LlamaIndex integration does.
"""

from __future__ import annotations

import pytest

from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from tests_support import subtitled_media_in


@pytest.fixture(scope="module")
def qdrant_index(tmp_path_factory, embed_model):
    """Ingested once for the module (the tests only read it); Qdrant imported here, not
    in every test worker that collects this file."""
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient
    from qdrant_client.models import VectorParams

    tmp_path = tmp_path_factory.mktemp("qdrant")
    subtitled_media = subtitled_media_in(tmp_path)
    client = QdrantClient(location=":memory:")
    # Created up front, in cosine space, as for any Qdrant deployment; the integration
    # would otherwise create it on the first insert, after ingest's delete-before-add.
    client.create_collection("moments", vectors_config=VectorParams(size=384, distance="Cosine"))
    store = QdrantVectorStore(client=client, collection_name="moments")
    folder = tmp_path / "index"
    index = VideoIndex(
        folder,
        embed_model=embed_model,
        vector_store=store,
        reader=VideoReader(media_dir=folder / "media", ocr="off"),
    )
    assert index.ingest([subtitled_media]).ok
    yield index
    index.close()


def test_search_finds_the_moment_with_context_and_frame(qdrant_index, timeline):
    hits = qdrant_index.search("how much ultraviolet B radiation does the ozone layer absorb")
    assert hits
    best = hits[0]
    said = next(
        s for s in timeline["ozone_explainer.mp4"]["narration"] if "ninety percent" in s["text"]
    )
    assert best.source.endswith("ozone_explainer.mp4")
    assert best.start <= said["start"] + 1.0 and best.end >= said["end"] - 1.0
    assert best.frame_path  # the postprocessor looked the frame up by id in Qdrant
    assert "ninety percent" in best.text


def test_text_documents_are_found_too(qdrant_index):
    hits = qdrant_index.search("when do production deploys happen", modalities=["text"])
    assert hits and hits[0].source.endswith("handbook.md")


def test_the_recording_scores_of_a_standout_gate_come_from_one_recording(qdrant_index):
    question = "how much ultraviolet B radiation does the ozone layer absorb"
    scores = qdrant_index.recording_scores(question)
    assert len(scores) >= 2 and scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(qdrant_index.search(question)[0].score, abs=1e-3)
