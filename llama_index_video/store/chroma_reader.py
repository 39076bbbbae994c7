"""A LlamaIndex vector store over a local Chroma folder read through Chroma's engine alone
(:mod:`llama_index_video.store.chroma_engine`), for a process that reads once through
``VideoIndex``: the command line's ``search`` of a folder its plain route does not
serve (:mod:`llama_index_video.search.one_shot`).

:class:`ChromaEngineReader` reads only: a LlamaIndex vector store whose ``query`` and
``get_nodes`` give what ``ChromaVectorStore`` gives for the same rows (nodes from the
same metadata, scores ``exp(-distance)``, filters in Chroma's ``where`` form), and whose
``client`` answers the few ``chromadb.Collection`` calls this package makes on a read
path (``query``, ``get``, ``count``). It writes nothing (``add`` and ``delete`` refuse).
Any failure to open, including a Chroma without this engine, gives None: the caller
opens Chroma the usual way, which also says what is wrong in one line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from llama_index_video.store.chroma_engine import EngineCollection, one_shot_collection

_OPERATORS = {
    "==": "$eq",
    "!=": "$ne",
    ">": "$gt",
    "<": "$lt",
    ">=": "$gte",
    "<=": "$lte",
    "in": "$in",
    "nin": "$nin",
}


class ChromaEngineReader(BasePydanticVectorStore):
    """A read-only LlamaIndex vector store over one collection of a local Chroma folder."""

    stores_text: bool = True
    flat_metadata: bool = True
    _collection: EngineCollection = PrivateAttr()

    def __init__(self, collection: EngineCollection) -> None:
        super().__init__(stores_text=True)
        self._collection = collection

    @classmethod
    def class_name(cls) -> str:
        return "ChromaEngineReader"

    @property
    def client(self) -> EngineCollection:
        return self._collection

    @property
    def engine_collection(self) -> EngineCollection:
        """What :func:`~llama_index_video.store.collection.chroma_collection` returns
        for this store (its ``client``), found without importing ``chromadb``."""
        return self._collection

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        where = chroma_where(query.filters) if query.filters is not None else None
        if not query.query_embedding:
            return self._nodes(self._collection.get(where=where, limit=query.similarity_top_k))
        found = self._collection.query(
            query_embeddings=[query.query_embedding],
            n_results=query.similarity_top_k,
            where=where,
        )
        result = self._nodes({key: found[key][0] for key in ("ids", "documents", "metadatas")})
        result.similarities = [math.exp(-distance) for distance in found["distances"][0]]
        return result

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        where = chroma_where(filters) if filters else None
        return list(self._nodes(self._collection.get(node_ids or None, where=where)).nodes or [])

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        raise NotImplementedError("ChromaEngineReader only reads")

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        raise NotImplementedError("ChromaEngineReader only reads")

    @staticmethod
    def _nodes(found: dict[str, Any]) -> VectorStoreQueryResult:
        rows = zip(found["ids"], found["documents"], found["metadatas"], strict=True)
        nodes = [metadata_dict_to_node(metadata, text=text) for _, text, metadata in rows]
        return VectorStoreQueryResult(nodes=nodes, ids=list(found["ids"]))


def chroma_where(filters: MetadataFilters) -> dict[str, Any]:
    """LlamaIndex metadata filters in Chroma's ``where`` form, as ``ChromaVectorStore``
    writes them."""
    clauses: list[dict[str, Any]] = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            clauses.append(chroma_where(item))
        else:
            clauses.append(_clause(item))
    if len(clauses) == 1:
        return clauses[0]
    condition = str(getattr(filters.condition, "value", filters.condition) or "and")
    return {f"${condition}": clauses} if clauses else {}


def _clause(item: MetadataFilter) -> dict[str, Any]:
    operator = str(getattr(item.operator, "value", item.operator))
    if operator not in _OPERATORS:
        raise ValueError(f"filter operator {operator} has no Chroma form")
    return {item.key: {_OPERATORS[operator]: item.value}}


def one_shot_reader(
    path: Path, *, chroma_url: str | None, collection: str | None
) -> ChromaEngineReader | None:
    """:func:`~llama_index_video.store.chroma_engine.one_shot_collection` as a
    LlamaIndex vector store (None when that is None)."""
    found = one_shot_collection(path, chroma_url=chroma_url, collection=collection)
    return ChromaEngineReader(found) if found is not None else None
