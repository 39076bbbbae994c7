"""Finding the moments around a time in a file, wherever the nodes live.

``PrevNextNodePostprocessor`` follows node links through a docstore, which stays empty
when the vector store keeps the text (Chroma). These lookups ask the vector store
itself, or a docstore when one is given, in one of two ways:

- by id, following the links the reader stores (PREVIOUS/NEXT between units,
  ``frame_id`` on a unit, ``unit_id`` on a frame or OCR node): one batched lookup per
  hop, a few milliseconds even on 100 hours of transcript;
- by metadata (content hash and time range) for nodes without those links, or for a
  window in seconds. Ranges overlap-match: a slide shown from 1:00 to 9:00 is found
  for 5:00. Chroma answers a metadata filter about 100x slower than an id lookup.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from llama_index.core.schema import BaseNode, NodeRelationship
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
    """Looks nodes up: by id, or those of one file whose span overlaps ``[start, end]``."""

    def overlapping(self, content_hash: str, start: float, end: float) -> list[BaseNode]: ...

    def by_ids(self, node_ids: Collection[str]) -> list[BaseNode]: ...


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

    def by_ids(self, node_ids: Collection[str]) -> list[BaseNode]:
        return list(self._store.get_nodes(list(node_ids))) if node_ids else []


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


@dataclass
class Linked:
    """A timed node's context found through links: ordered units, and its frame."""

    units: list[BaseNode] = field(default_factory=list)
    frame: BaseNode | None = None


def follow_links(
    timeline: Timeline, nodes: Sequence[BaseNode], *, neighbours: int, frames: bool
) -> dict[str, Linked] | None:
    """Each node's unit and ``neighbours`` units either side, and the frame on screen.

    A transcript node is its own unit; a frame or OCR node starts from its
    ``unit_id``. A frame or OCR node is its own frame. Returns None if a node lacks the
    links (nodes made by other code): the caller looks up time ranges instead.
    """
    cores: dict[str, str] = {}
    for node in nodes:
        modality = node.metadata.get(schema.MODALITY)
        if modality == "transcript" and (not frames or schema.FRAME_ID in node.metadata):
            cores[node.node_id] = node.node_id
        elif modality in ("frame", "ocr") and schema.UNIT_ID in node.metadata:
            cores[node.node_id] = str(node.metadata[schema.UNIT_ID])
        else:
            return None
    known = {node.node_id: node for node in nodes}
    _fetch(timeline, known, cores.values())
    chains = {hit: [known[core]] for hit, core in cores.items() if core in known}
    for hop in range(neighbours + 1):
        wanted: set[str] = set()
        for chain in chains.values():
            if hop < neighbours:
                wanted.add(_link(chain[0], NodeRelationship.PREVIOUS) or "")
                wanted.add(_link(chain[-1], NodeRelationship.NEXT) or "")
            if hop == 0 and frames:
                wanted.add(str(chain[0].metadata.get(schema.FRAME_ID) or ""))
        _fetch(timeline, known, wanted)
        if hop == neighbours:
            break
        for chain in chains.values():
            before = known.get(_link(chain[0], NodeRelationship.PREVIOUS) or "")
            after = known.get(_link(chain[-1], NodeRelationship.NEXT) or "")
            chain[:0] = [before] if before is not None else []
            chain.extend([after] if after is not None else [])
    return {hit: _linked(known[hit], chains.get(hit, []), known, frames) for hit in cores}


def _linked(
    hit: BaseNode, chain: list[BaseNode], known: dict[str, BaseNode], frames: bool
) -> Linked:
    if hit.metadata.get(schema.MODALITY) in ("frame", "ocr"):
        return Linked(units=chain, frame=hit)
    frame = known.get(str(hit.metadata.get(schema.FRAME_ID) or "")) if frames else None
    return Linked(units=chain, frame=frame)


def _link(node: BaseNode, relation: NodeRelationship) -> str | None:
    related = node.relationships.get(relation)
    return getattr(related, "node_id", None)


def _fetch(timeline: Timeline, known: dict[str, BaseNode], ids: Iterable[str]) -> None:
    missing = {i for i in ids if i and i not in known}
    if missing:
        known.update((node.node_id, node) for node in timeline.by_ids(missing))
