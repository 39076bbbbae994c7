"""Topic-level retrieval: a question finds its chapter first, then the best moments inside.

A question about a topic ("What did they say about the remote's shape?") matches the
chapter that discusses it (a chapter node's vector is the mean of its units') better than
any single sentence of it, while the best single sentence may sit in another chapter
that shares a few words. :class:`ChapterRetriever` ranks the chapters, then returns each
ranked chapter's best moments (at most :data:`PER_CHAPTER`, in the moments' own order),
then the remaining moments in their order: every moment retrieval found, reordered.
Transcript units know their chapter (``schema.CHAPTER``, set at ingest); other moments
(frames, on-screen text) and recordings without chapters keep their plain rank after
the chaptered ones. :func:`chapter_first` is the reordering alone, for any items.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from llama_index_video import schema

Item = TypeVar("Item")

PER_CHAPTER = 2
"""At most this many moments of one chapter before the next chapter's."""
CHAPTERS = 3
"""The chapters ranked for a question."""
CANDIDATES = 5
"""The moments retrieved per hit asked, to find the best ones inside the chapters."""


def chapter_first(
    moments: Sequence[Item],
    chapters: Sequence[Hashable],
    chapter_of: Callable[[Item], Hashable | None],
    *,
    per_chapter: int = PER_CHAPTER,
) -> list[Item]:
    """``moments`` (best first) reordered: the best ``per_chapter`` of each of the
    ranked ``chapters`` in chapter order, then the rest in their own order."""
    first: list[Item] = []
    for chapter in chapters:
        first += [m for m in moments if chapter_of(m) == chapter][:per_chapter]
    taken = {id(m) for m in first}
    return first + [m for m in moments if id(m) not in taken]


class ChapterRetriever(BaseRetriever):
    """Chapters first, then their best moments (see the module docstring).

    Args:
        moments: Retrieves the candidate moments (ask it for several per hit wanted).
        chapters: Retrieves chapter nodes (modality ``chapter``), best first.
        top_k: Moments returned.
    """

    def __init__(self, *, moments: BaseRetriever, chapters: BaseRetriever, top_k: int) -> None:
        super().__init__()
        self.moments = moments
        self.chapters = chapters
        self.top_k = top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ranked = [n.node.node_id for n in self.chapters.retrieve(query_bundle)]
        found = self.moments.retrieve(query_bundle)
        return chapter_first(found, ranked, lambda n: n.node.metadata.get(schema.CHAPTER))[
            : self.top_k
        ]
