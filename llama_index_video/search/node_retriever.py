"""The package's retrievers as LlamaIndex retrievers: their hits as ``NodeWithScore``.

Search runs on plain data (:mod:`llama_index_video.stored`): its retrievers
(:class:`~llama_index_video.search.fusion.FusionRetriever`, by chapter, by a named
speaker) return :class:`~llama_index_video.stored.Scored` hits of whatever nodes the
store gave. :class:`NodeRetriever` is where a LlamaIndex app meets them
(``VideoIndex.as_retriever``, the answerer's retriever): each hit becomes a
``NodeWithScore``, a :class:`FusedHit` when it carries the similarity behind a fused
score, starting where it says what was asked, as a search hit does
(:func:`~llama_index_video.search.seek.seek_node`).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from llama_index_video.search.fusion import Retriever, aretrieved
from llama_index_video.search.seek import seek_node


class FusedHit(NodeWithScore):
    """A fused hit: ``score`` is the fused score, ``similarity`` the cosine behind it
    (the lexical match, for a hit found by its words alone)."""

    similarity: float | None = None


def as_node_with_score(hit: Any) -> NodeWithScore:
    """A retrieved hit as LlamaIndex hands hits on (itself if it is one already)."""
    if isinstance(hit, NodeWithScore):
        return hit
    if getattr(hit, "similarity", None) is None:
        return NodeWithScore(node=hit.node, score=hit.score)
    return FusedHit(node=hit.node, score=hit.score, similarity=hit.similarity)


class NodeRetriever(BaseRetriever):
    """``retriever`` (any of the package's) as a LlamaIndex retriever.

    What ``retriever`` shows (a ``FusionRetriever``'s ``channels``, ``top_k``) shows
    through, so code that inspects ``as_retriever()`` reads it unchanged.
    """

    def __init__(self, retriever: Retriever) -> None:
        super().__init__()
        self.retriever = retriever

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "retriever":
            raise AttributeError(name)
        return getattr(self.retriever, name)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = self.retriever.retrieve(query_bundle)
        return [seek_node(as_node_with_score(hit), query_bundle.query_str) for hit in found]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = await aretrieved(self.retriever, query_bundle)
        return [seek_node(as_node_with_score(hit), query_bundle.query_str) for hit in found]
