"""``VideoRetriever``: vector retrieval with comparable scores, a modality filter and a cutoff.

Its scores are cosine similarities whatever the store, hits below the threshold and
hits of contents not completely written are dropped, and on Chroma the candidates' rows
are read batch by batch: :mod:`llama_index_video.search.candidates` says how and why.
Given the index ``folder``, the media paths of the nodes returned are resolved against
it (:mod:`llama_index_video.store.media_paths`): they resolve from any working directory.
"""

from __future__ import annotations

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

from llama_index_video.search.candidates import (
    CollectionRetriever,
    check_options,
    cosine_from_chroma,
    kept,
    wanted_metadata,
)
from llama_index_video.store.collection import chroma_collection


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
        languages: Only moments heard in these languages (Whisper codes: ``fr``); None:
            any (a moment with no language is in none).
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
        languages: Sequence[str] | None = None,
        folder: Path | None = None,
    ) -> None:
        check_options(top_k, modalities)
        super().__init__()
        wanted = wanted_metadata(modalities, speakers, contents, languages)
        chosen: list[MetadataFilter | MetadataFilters] = [
            MetadataFilter(key=key, value=list(values), operator=FilterOperator.IN)
            for key, values in wanted
            if values
        ]
        filters = MetadataFilters(filters=chosen) if chosen else None
        # Not index.as_retriever(): a MultiModalVectorStoreIndex's would add image hits.
        self._retriever = VectorIndexRetriever(index, similarity_top_k=top_k, filters=filters)
        collection = chroma_collection(index.vector_store)
        self._from_chroma = collection is not None
        self._rows = (  # Chroma's candidates read as FusionRetriever asks for them
            CollectionRetriever(
                collection,
                index.vector_store.get_nodes,
                scored=lambda node, score: NodeWithScore(node=node, score=score),
                top_k=top_k,
                threshold=threshold,
                visible=visible,
                folder=folder,
            )
            if collection is not None and filters is None
            else None
        )
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
        if self._rows is None or query_bundle.embedding is None:
            yield self.retrieve(query_bundle)
            return
        yield from self._rows.ranked_batches(query_bundle, first=first)

    def _rescore(self, hits: list[NodeWithScore]) -> list[NodeWithScore]:
        for hit in hits:
            if self._from_chroma and hit.score is not None and hit.score > 0:
                hit.score = cosine_from_chroma(hit.score)
        if self.threshold is not None:
            hits = [h for h in hits if h.score is not None and h.score >= self.threshold]
        return self._kept(hits)

    def _kept(self, hits: list[NodeWithScore]) -> list[NodeWithScore]:
        return kept(hits, self._visible, self._folder)
