"""Topic-level retrieval: a moment counts more when its chapter matches the question.

A question about a topic ("What did they say about the remote's shape?") matches the
chapter that discusses it (a chapter node's vector is the mean of its units') as well as
single sentences of it, while the best single sentence may sit in another chapter that
shares a few words. :class:`ChapterRetriever` ranks the chapters, then re-scores every
moment retrieval found: its own score plus :data:`CHAPTER_WEIGHT` times its chapter's
(:func:`chapter_blend`). Transcript units know their chapter (``schema.CHAPTER``, set at
ingest); a moment of a chapter not ranked gets the lowest ranked chapter's score, and
other moments (frames, on-screen text) and recordings without chapters keep their own.

Ranking the chapters first and each one's best moments after (the previous way) found
the answer stretch first for 10 of 26 held-out QMSum questions against 13 for the plain
ranking; blending finds it first for 13 and in the top 3 for 19 (plain 17), with the
weight chosen on the tuning meetings (``python benchmarks/meetings.py``, dense scores).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from llama_index_video import schema
from llama_index_video.search.fusion import Retriever, as_query
from llama_index_video.stored import Query

Item = TypeVar("Item")
Key = TypeVar("Key", bound=Hashable)

CHAPTER_WEIGHT = 0.2
"""How much a chapter's match adds to its moments' (0.1-0.3 tied on the tuning meetings)."""
CHAPTERS = 10
"""The chapters ranked for a question (an hour of meeting has about ten)."""
CANDIDATES = 5
"""The moments retrieved per hit asked, to re-score with their chapters."""


def chapter_blend(
    moments: Sequence[Item],
    score_of: Callable[[Item], float],
    chapter_of: Callable[[Item], Key | None],
    chapters: Mapping[Key, float],
    *,
    weight: float = CHAPTER_WEIGHT,
) -> list[Item]:
    """``moments`` ordered by their score plus ``weight`` times their chapter's score in
    ``chapters`` (the lowest of those for a chapter not in it, nothing for a moment
    without one); ties keep their order."""
    floor = min(chapters.values(), default=0.0)

    def blended(moment: Item) -> float:
        chapter = chapter_of(moment)
        boost = chapters.get(chapter, floor) if chapter is not None and chapters else 0.0
        return score_of(moment) + weight * boost

    return sorted(moments, key=blended, reverse=True)


class ChapterRetriever:
    """Moments re-scored with their chapter's match (see the module docstring).

    Args:
        moments: Retrieves the candidate moments (ask it for several per hit wanted).
        chapters: Retrieves chapter nodes (modality ``chapter``), best first.
        top_k: Moments returned.
        query: Makes of a question (a string) the query both retrievers take, once.
    """

    def __init__(
        self,
        *,
        moments: Retriever,
        chapters: Retriever,
        top_k: int,
        query: Callable[[str], Any] = Query,
    ) -> None:
        self.moments = moments
        self.chapters = chapters
        self.top_k = top_k
        self.query = query

    def retrieve(self, query_bundle: Any) -> list[Any]:
        """The moments for a query (a string, or as the retrievers take it), best first."""
        query_bundle = as_query(query_bundle, self.query)
        ranked = {n.node.node_id: n.score or 0.0 for n in self.chapters.retrieve(query_bundle)}
        found = self.moments.retrieve(query_bundle)
        return chapter_blend(
            found, lambda n: n.score or 0.0, lambda n: n.node.metadata.get(schema.CHAPTER), ranked
        )[: self.top_k]
