"""The package's retrievers as LlamaIndex retrievers: their hits as ``NodeWithScore``.

Search runs on plain data (:mod:`llama_index_video.stored`): its retrievers
(:class:`~llama_index_video.search.fusion.FusionRetriever`, by chapter, by a named
speaker) return :class:`~llama_index_video.stored.Scored` hits of whatever nodes the
store gave. :class:`NodeRetriever` is where a LlamaIndex app meets them
(``VideoIndex.as_retriever``, the answerer's retriever): each hit becomes a
``NodeWithScore``, a :class:`FusedHit` when it carries the similarity behind a fused
score. For an app (``seek``), each hit starts where it says what was asked, as a search
hit does (:func:`~llama_index_video.search.seek.seek_node`); search and ask seek
after their postprocessing, which places a hit's context and frame by its unit.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    through, so code that inspects ``as_retriever()`` reads it unchanged. ``seek``: each
    hit starts at the sentence that matches the query.
    """

    def __init__(self, retriever: Retriever, *, seek: bool = False) -> None:
        super().__init__()
        self.retriever = retriever
        self._seek = seek

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "retriever":
            raise AttributeError(name)
        return getattr(self.retriever, name)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._handed_on(self.retriever.retrieve(query_bundle), query_bundle)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._handed_on(await aretrieved(self.retriever, query_bundle), query_bundle)

    def _handed_on(self, found: Sequence[Any], query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = [as_node_with_score(hit) for hit in found]
        return [seek_node(hit, query_bundle.query_str) for hit in hits] if self._seek else hits
