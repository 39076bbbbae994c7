"""A local Chroma folder read through Chroma's engine alone (issue 38: ``chromadb``'s Python
layer costs a cold ``search`` 1.1-1.4 CPU s): the rows, scores, filters and search hits
``ChromaVectorStore`` gives for the same folder, and None wherever it should not be used."""

from __future__ import annotations

import json
import shutil

import pytest
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.store.chroma_reader import ChromaEngineReader, one_shot_reader
from llama_index_video.store.collection import chroma_collection, row_total
from llama_index_video.store.folder import CHROMA_URL_META, IndexFolder
from llama_index_video.store.lock import WriterLock
from llama_index_video.store.manifest import Manifest

QUERIES = (
    "why does the stratosphere warm up",
    "who owns the billing migration",
    "which days are deploys on",
    "recipe for sourdough bread",
)


@pytest.fixture(scope="module")
def folder(example_index, tmp_path_factory):
    """A copy of the example index (this process's Chroma keeps the original open)."""
    copy = tmp_path_factory.mktemp("engine") / "index"
    shutil.copytree(example_index.path, copy)
    return copy


@pytest.fixture(scope="module")
def reader(folder) -> ChromaEngineReader:
    found = one_shot_reader(folder, chroma_url=None, collection=None)
    assert found is not None
    return found


def _rows(nodes) -> list[tuple[str, str, dict]]:
    return sorted((n.node_id, n.get_content(), n.metadata) for n in nodes)


def test_rows_and_scores_are_chromas(example_index, reader):
    example_index.check_store()  # its Chroma opened again if another index of it closed
    chroma = example_index.vector_store
    assert row_total(reader) == row_total(chroma) > 0
    assert chroma_collection(reader) is reader.client
    vector = example_index.embed_model.get_query_embedding(QUERIES[0])
    for filters in (
        None,
        MetadataFilters(
            filters=[
                MetadataFilter(
                    key=schema.MODALITY, value=["ocr", "transcript"], operator=FilterOperator.IN
                )
            ]
        ),
    ):
        query = VectorStoreQuery(query_embedding=vector, similarity_top_k=6, filters=filters)
        mine, theirs = reader.query(query), chroma.query(query)
        assert mine.ids == theirs.ids and len(mine.ids) == 6
        assert mine.similarities == pytest.approx(theirs.similarities, abs=1e-6)
        assert _rows(mine.nodes) == _rows(theirs.nodes)


def test_nodes_by_id_and_by_filters_are_chromas(example_index, reader):
    example_index.check_store()  # its Chroma opened again if another index of it closed
    chroma = example_index.vector_store
    some = chroma.query(
        VectorStoreQuery(
            query_embedding=example_index.embed_model.get_query_embedding(QUERIES[1]),
            similarity_top_k=4,
        )
    ).ids
    assert _rows(reader.get_nodes(some)) == _rows(chroma.get_nodes(some))
    content = reader.get_nodes(some[:1])[0].metadata[schema.CONTENT_HASH]
    spans = MetadataFilters(  # the shape of a context lookup: one content, a time window
        filters=[
            MetadataFilter(key=schema.CONTENT_HASH, value=content),
            MetadataFilter(key=schema.START_S, value=40.0, operator=FilterOperator.LTE),
            MetadataFilter(key=schema.END_S, value=10.0, operator=FilterOperator.GTE),
        ]
    )
    either = MetadataFilters(
        filters=[
            MetadataFilter(key=schema.MODALITY, value="chapter"),
            MetadataFilter(key=schema.MODALITY, value="ocr"),
        ],
        condition=FilterCondition.OR,
    )
    for filters in (spans, either):
        found = reader.get_nodes(None, filters=filters)
        assert found and _rows(found) == _rows(chroma.get_nodes(None, filters=filters))


@pytest.mark.parametrize("query", QUERIES)
def test_search_through_the_engine_gives_the_indexs_hits(example_index, folder, reader, query):
    opened = VideoIndex(folder, embed_model=example_index.embed_model, vector_store=reader)
    try:
        for modalities in (None, ["text"]):
            mine = _json(opened.search(query, modalities=modalities), folder)
            assert mine == _json(
                example_index.search(query, modalities=modalities), example_index.path
            )
    finally:
        opened.close()


def _json(hits, folder) -> str:
    """The hits' JSON, the index folder's path (in frame paths) as ``<index>``."""
    return json.dumps([hit.to_dict() for hit in hits]).replace(str(folder), "<index>")


def test_not_used_for_a_server_a_writer_or_a_missing_collection(folder, tmp_path):
    assert one_shot_reader(folder, chroma_url="http://127.0.0.1:1", collection=None) is None
    assert one_shot_reader(folder, chroma_url=None, collection="no_such_collection") is None
    with WriterLock(folder) as lock:
        lock.acquire(wait=0)
        assert one_shot_reader(folder, chroma_url=None, collection=None) is None
    served = tmp_path / "served"
    shutil.copytree(folder, served)
    manifest = Manifest(IndexFolder(served).manifest_file)
    manifest.set_meta(CHROMA_URL_META, "http://127.0.0.1:1")
    manifest.close()
    assert one_shot_reader(served, chroma_url=None, collection=None) is None


def test_it_only_reads(reader):
    with pytest.raises(NotImplementedError):
        reader.add([])
    with pytest.raises(NotImplementedError):
        reader.delete("x")
