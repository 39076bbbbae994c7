"""Looking nodes up wherever they live: by id, or by file and time range.

``PrevNextNodePostprocessor`` follows node links through a docstore, which stays empty
when the vector store keeps the text (Chroma). A :class:`Timeline` asks the vector
store itself, or a docstore when one is given. Ranges overlap-match: a slide shown
from 1:00 to 9:00 is found for 5:00. Chroma answers a metadata filter about 100x
slower than an id lookup, which is why :mod:`~llama_index_video.postprocessing.context`
prefers the links the reader stores.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from llama_index_video import schema
from llama_index_video.stored import Moment

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode
    from llama_index.core.storage.docstore.types import BaseDocumentStore
    from llama_index.core.vector_stores.types import BasePydanticVectorStore


class Timeline(Protocol):
    """Looks nodes up: by id, or those of one file whose span overlaps ``[start, end]``."""

    def overlapping(self, content_hash: str, start: float, end: float) -> Sequence[Moment]: ...

    def by_ids(self, node_ids: Collection[str]) -> Sequence[Moment]: ...


class VectorStoreTimeline:
    """Asks a vector store (``get_nodes`` with metadata filters), e.g. Chroma."""

    def __init__(self, vector_store: BasePydanticVectorStore) -> None:
        self._store = vector_store

    def overlapping(self, content_hash: str, start: float, end: float) -> list[BaseNode]:
        from llama_index.core.vector_stores.types import (
            FilterCondition,
            FilterOperator,
            MetadataFilter,
            MetadataFilters,
        )

        filters = MetadataFilters(
            filters=[
                MetadataFilter(key=schema.CONTENT_HASH, value=content_hash),
                MetadataFilter(key=schema.START_S, value=end, operator=FilterOperator.LTE),
                MetadataFilter(key=schema.END_S, value=start, operator=FilterOperator.GTE),
            ],
            condition=FilterCondition.AND,
        )
        return list(self._store.get_nodes(None, filters=filters))

    def by_ids(self, node_ids: Collection[str]) -> list[BaseNode]:
        return list(self._store.get_nodes(list(node_ids))) if node_ids else []


class RowsTimeline:
    """Asks a Chroma collection's rows directly (``where`` as Chroma takes it), e.g.
    Chroma's engine alone (:class:`~llama_index_video.store.chroma_engine.EngineRows`)."""

    def __init__(
        self,
        where: Callable[[dict[str, Any]], Sequence[Moment]],
        read: Callable[[list[str]], Sequence[Moment]],
    ) -> None:
        self._where = where
        self._read = read

    def overlapping(self, content_hash: str, start: float, end: float) -> list[Moment]:
        return list(
            self._where(
                {
                    "$and": [
                        {schema.CONTENT_HASH: {"$eq": content_hash}},
                        {schema.START_S: {"$lte": end}},
                        {schema.END_S: {"$gte": start}},
                    ]
                }
            )
        )

    def by_ids(self, node_ids: Collection[str]) -> list[Moment]:
        return list(self._read(list(node_ids))) if node_ids else []


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

    def by_ids(self, node_ids: Collection[str]) -> list[BaseNode]:
        found = (self._docstore.get_node(i, raise_error=False) for i in node_ids)
        return [node for node in found if node is not None]


def span(node: Moment) -> tuple[float, float] | None:
    """A node's ``(start, end)`` in seconds, or None for untimed nodes."""
    start, end = node.metadata.get(schema.START_S), node.metadata.get(schema.END_S)
    if start is None or end is None:
        return None
    return float(start), float(end)


def overlaps(node: Moment, lo: float, hi: float) -> bool:
    """Whether a timed node's span meets ``[lo, hi]`` (touching counts); False if untimed."""
    node_span = span(node)
    return node_span is not None and node_span[0] <= hi and node_span[1] >= lo


def of_modality(nodes: Sequence[Moment], *modalities: str) -> list[Moment]:
    """The nodes of the given modalities, sorted by start time."""
    chosen = [n for n in nodes if n.metadata.get(schema.MODALITY) in modalities]
    return sorted(chosen, key=lambda n: (n.metadata[schema.START_S], n.metadata[schema.END_S]))
