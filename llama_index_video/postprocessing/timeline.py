"""Finding the moments around a time in a file, wherever the nodes live.

``PrevNextNodePostprocessor`` follows node links through a docstore, which stays empty
when the vector store keeps the text (Chroma). These lookups ask the vector store
itself by metadata (content hash and time range), or scan a docstore when one is
given. Ranges overlap-match: a slide shown from 1:00 to 9:00 is found for 5:00.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from llama_index.core.schema import BaseNode
from llama_index.core.storage.docstore.types import BaseDocumentStore
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index_video import schema


class Timeline(Protocol):
    """Looks up the nodes of one file whose span overlaps ``[start, end]``."""

    def overlapping(self, content_hash: str, start: float, end: float) -> list[BaseNode]: ...


class VectorStoreTimeline:
    """Asks a vector store (``get_nodes`` with metadata filters), e.g. Chroma."""

    def __init__(self, vector_store: BasePydanticVectorStore) -> None:
        self._store = vector_store

    def overlapping(self, content_hash: str, start: float, end: float) -> list[BaseNode]:
        filters = MetadataFilters(
            filters=[
                MetadataFilter(key=schema.CONTENT_HASH, value=content_hash),
                MetadataFilter(key=schema.START_S, value=end, operator=FilterOperator.LTE),
                MetadataFilter(key=schema.END_S, value=start, operator=FilterOperator.GTE),
            ],
            condition=FilterCondition.AND,
        )
        return list(self._store.get_nodes(None, filters=filters))


class DocstoreTimeline:
    """Scans a docstore, indexing it by file once per change in its size."""

    def __init__(self, docstore: BaseDocumentStore) -> None:
        self._docstore = docstore
        self._by_hash: dict[str, list[BaseNode]] = {}
        self._indexed_size = -1

    def overlapping(self, content_hash: str, start: float, end: float) -> list[BaseNode]:
        docs = self._docstore.docs
        if len(docs) != self._indexed_size:
            self._by_hash = {}
            for node in docs.values():
                key = node.metadata.get(schema.CONTENT_HASH)
                if key is not None and schema.START_S in node.metadata:
                    self._by_hash.setdefault(key, []).append(node)
            self._indexed_size = len(docs)
        return [
            node
            for node in self._by_hash.get(content_hash, ())
            if node.metadata[schema.START_S] <= end and node.metadata[schema.END_S] >= start
        ]


def span(node: BaseNode) -> tuple[float, float] | None:
    """A node's ``(start, end)`` in seconds, or None for untimed nodes."""
    start, end = node.metadata.get(schema.START_S), node.metadata.get(schema.END_S)
    if start is None or end is None:
        return None
    return float(start), float(end)


def of_modality(nodes: Sequence[BaseNode], *modalities: str) -> list[BaseNode]:
    """The nodes of the given modalities, sorted by start time."""
    chosen = [n for n in nodes if n.metadata.get(schema.MODALITY) in modalities]
    return sorted(chosen, key=lambda n: (n.metadata[schema.START_S], n.metadata[schema.END_S]))
