"""``VideoRetriever``: vector retrieval with comparable scores, a modality filter and a cutoff.

LlamaIndex's Chroma store reports ``exp(-distance)`` whatever the space; with the
cosine space that converts back to cosine similarity exactly (``1 + ln(score)``), so
scores, and the relevance threshold, mean the same with Chroma and with in-memory
stores. Hits below the threshold are dropped: with nothing relevant in the index,
retrieval returns nothing rather than the least unrelated moments.

Hits of contents that are not completely written (an ingest running, or one that was
interrupted) are dropped too, when a ``visible`` check is given (``VideoIndex`` asks
its manifest): one indexed lookup of the hits' content hashes per query, rather than a
metadata filter in the vector store, which Chroma answers far more slowly.

Given the index ``folder``, the media paths of the nodes returned are resolved against
it (:mod:`llama_index_video.store.media_paths`): they resolve from any working directory.

Reading a Chroma row's metadata and text is most of what a query costs (about 8 of
9.5 ms for 50 rows on 100 hours of transcript; the vector search itself 1.5 ms), and a
fused search seldom needs more than its best few candidates. So
:meth:`VideoRetriever.ranked_batches` ranks the candidates by ids and distances alone and
reads their rows batch by batch, as :class:`~llama_index_video.search.fusion.FusionRetriever`
asks for them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

from llama_index.core import VectorStoreIndex
from llama_index.core.retrievers import BaseRetriever, VectorIndexRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index_video import schema
from llama_index_video.store.collection import chroma_collection
from llama_index_video.store.folder_index import resolved_node


class VideoRetriever(BaseRetriever):
    """Top-k moments from a ``VectorStoreIndex`` built from this package's nodes.

    Args:
        index: The vector index.
        top_k: How many hits to return at most.
        modalities: Only these modalities (e.g. ``("transcript", "ocr")``); None: all.
        threshold: Minimum cosine similarity; None keeps everything.
        visible: Given the hits' content hashes, returns those whose rows are complete;
            hits of other contents are dropped. None keeps every hit.
        speakers: Only transcript units spoken by these (``SPEAKER_1``...); None: anyone.
        contents: Only nodes of these contents (content hashes); None: every file.
        folder: The index folder the stored media paths are relative to; None: the
            paths as stored.
    """

    def __init__(
        self,
        index: VectorStoreIndex,
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        threshold: float | None = None,
        visible: Callable[[Collection[str]], set[str]] | None = None,
        speakers: Sequence[str] | None = None,
        contents: Sequence[str] | None = None,
        folder: Path | None = None,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        unknown = set(modalities or ()) - set(schema.MODALITIES)
        if unknown:
            raise ValueError(
                f"unknown modality {sorted(unknown)}; choose from {', '.join(schema.MODALITIES)}"
            )
        super().__init__()
        wanted = [
            (schema.MODALITY, modalities),
            (schema.SPEAKER, speakers),
            (schema.CONTENT_HASH, contents),
        ]
        chosen: list[MetadataFilter | MetadataFilters] = [
            MetadataFilter(key=key, value=list(values), operator=FilterOperator.IN)
            for key, values in wanted
            if values
        ]
        filters = MetadataFilters(filters=chosen) if chosen else None
        # Not index.as_retriever(): a MultiModalVectorStoreIndex's would add image hits.
        self._retriever = VectorIndexRetriever(index, similarity_top_k=top_k, filters=filters)
        self._store = index.vector_store
        self._collection = chroma_collection(index.vector_store)
        self._from_chroma = self._collection is not None
        self._top_k = top_k
        self._filtered = filters is not None
        self.threshold = threshold
        self._visible = visible
        self._folder = folder

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._rescore(self._retriever.retrieve(query_bundle))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._rescore(await self._retriever.aretrieve(query_bundle))

    def ranked_batches(
        self, query_bundle: QueryBundle, *, first: int
    ) -> Iterator[list[NodeWithScore]]:
        """The hits :meth:`retrieve` returns, in its order, in batches read as they are asked for.

        From Chroma, given the query's embedding and without a metadata filter, one
        query ranks the candidates by distance alone (those below the threshold are
        never read); the first batch reads the rows of the best ``first`` of them, each
        later batch twice as many as the one before. Otherwise there is one batch:
        :meth:`retrieve`'s hits. A batch may be empty (its rows were not visible).
        """
        if first < 1:
            raise ValueError(f"first must be >= 1, got {first}")
        if self._collection is None or self._filtered or query_bundle.embedding is None:
            yield self.retrieve(query_bundle)
            return
        found = self._collection.query(
            query_embeddings=[query_bundle.embedding],
            n_results=self._top_k,
            include=["distances"],
        )
        ranked = [
            (node_id, cosine_from_chroma(math.exp(-distance)))
            for node_id, distance in zip(found["ids"][0], found["distances"][0], strict=True)
        ]
        if self.threshold is not None:
            ranked = [(i, s) for i, s in ranked if s >= self.threshold]
        start, size = 0, first
        while start < len(ranked):
            batch = ranked[start : start + size]
            rows = {node.node_id: node for node in self._store.get_nodes([i for i, _ in batch])}
            # A row deleted since the query (by a writer removing its file) is left out.
            yield self._kept([NodeWithScore(node=rows[i], score=s) for i, s in batch if i in rows])
            start, size = start + size, size * 2

    def _rescore(self, hits: list[NodeWithScore]) -> list[NodeWithScore]:
        for hit in hits:
            if self._from_chroma and hit.score is not None and hit.score > 0:
                hit.score = cosine_from_chroma(hit.score)
        if self.threshold is not None:
            hits = [h for h in hits if h.score is not None and h.score >= self.threshold]
        return self._kept(hits)

    def _kept(self, hits: list[NodeWithScore]) -> list[NodeWithScore]:
        return kept(hits, self._visible, self._folder)


def kept(
    hits: list[NodeWithScore],
    visible: Callable[[Collection[str]], set[str]] | None,
    folder: Path | None,
) -> list[NodeWithScore]:
    """The hits of visible contents (all if ``visible`` is None), their media paths
    resolved against ``folder`` (as stored if None)."""
    if visible is not None and hits:
        complete = visible({_content(hit) for hit in hits})
        hits = [hit for hit in hits if _content(hit) in complete]
    if folder is not None:
        for hit in hits:
            hit.node = resolved_node(hit.node, folder)
    return hits


def cosine_from_chroma(score: float) -> float:
    """The cosine similarity behind LlamaIndex's Chroma score, ``exp(-distance)``."""
    return 1.0 + math.log(score)


def _content(hit: NodeWithScore) -> str:
    return str(hit.node.metadata.get(schema.CONTENT_HASH, ""))
