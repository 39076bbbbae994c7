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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
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
from llama_index_video.store.media_paths import resolved_node


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
        self._from_chroma = chroma_collection(index.vector_store) is not None
        self.threshold = threshold
        self._visible = visible
        self._folder = folder

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._rescore(self._retriever.retrieve(query_bundle))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._rescore(await self._retriever.aretrieve(query_bundle))

    def _rescore(self, hits: list[NodeWithScore]) -> list[NodeWithScore]:
        for hit in hits:
            if self._from_chroma and hit.score is not None and hit.score > 0:
                hit.score = 1.0 + math.log(hit.score)
        if self._visible is not None and hits:
            complete = self._visible({_content(hit) for hit in hits})
            hits = [hit for hit in hits if _content(hit) in complete]
        if self.threshold is not None:
            hits = [h for h in hits if h.score is not None and h.score >= self.threshold]
        if self._folder is not None:
            for hit in hits:
                hit.node = resolved_node(hit.node, self._folder)
        return hits


def _content(hit: NodeWithScore) -> str:
    return str(hit.node.metadata.get(schema.CONTENT_HASH, ""))
