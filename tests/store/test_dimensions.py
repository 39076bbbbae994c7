"""One index, one dimension: a collection refuses vectors of another length, clearly."""

from __future__ import annotations

import chromadb
import pytest
from chromadb.config import Settings
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_index_video.errors import EmbeddingError
from llama_index_video.store.collection import chroma_collection
from llama_index_video.store.dimensions import check_dimension, stored_dimension


@pytest.fixture
def collection(tmp_path):
    client = chromadb.PersistentClient(
        path=str(tmp_path), settings=Settings(anonymized_telemetry=False)
    )
    return client.get_or_create_collection("moments", configuration={"hnsw": {"space": "cosine"}})


def test_an_empty_collection_takes_any_dimension(collection):
    assert stored_dimension(collection) is None
    check_dimension(collection, 1536, model="GeminiMultimodalEmbedding:gemini-embedding-2")


def test_the_same_dimension_passes_and_another_is_refused(collection):
    collection.add(ids=["a"], embeddings=[[0.1] * 768], documents=["x"])
    store = ChromaVectorStore(chroma_collection=collection)
    for holder in (collection, chroma_collection(store)):
        assert stored_dimension(holder) == 768
        check_dimension(holder, 768, model="gemini-embedding-2")
        with pytest.raises(EmbeddingError) as failure:
            check_dimension(holder, 1536, model="gemini-embedding-2")
        message = str(failure.value)
        assert "'moments' holds 768-dimensional vectors" in message
        assert "gemini-embedding-2 makes 1536-dimensional" in message
        assert "output_dimensionality=768" in message


def test_only_a_chroma_store_has_a_chroma_collection(collection):
    from llama_index.core.vector_stores import SimpleVectorStore

    assert chroma_collection(ChromaVectorStore(chroma_collection=collection)) is collection
    assert chroma_collection(SimpleVectorStore()) is None
