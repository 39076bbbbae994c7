"""The vector channel's candidates from a Chroma collection, read as few rows as matter.

LlamaIndex's Chroma store reports ``exp(-distance)`` whatever the space; with the
cosine space that converts back to cosine similarity exactly (``1 + ln(score)``), so
scores, and the relevance threshold, mean the same with Chroma and with in-memory
stores (:func:`cosine_from_chroma`). Hits below the threshold are dropped: with nothing
relevant in the index, retrieval returns nothing rather than the least unrelated moments.

Hits of contents that are not completely written (an ingest running, or one that was
interrupted) are dropped too, when a ``visible`` check is given (``VideoIndex`` asks
its manifest): one indexed lookup of the hits' content hashes per query, rather than a
metadata filter in the vector store, which Chroma answers far more slowly
(:func:`kept`, which also resolves the media paths of the nodes against the index
folder, :mod:`llama_index_video.store.media_paths`).

Reading a Chroma row's metadata and text is most of what a query costs (about 8 of
9.5 ms for 50 rows on 100 hours of transcript; the vector search itself 1.5 ms), and a
fused search seldom needs more than its best few candidates. So :func:`ranked_batches`
ranks the candidates by ids and distances alone and reads their rows batch by batch, as
:class:`~llama_index_video.search.fusion.FusionRetriever` asks for them. It serves
:class:`CollectionRetriever`, which both
:class:`~llama_index_video.search.retriever.VideoRetriever` (LlamaIndex's Chroma store,
its nodes) and the command line's one-shot search (Chroma's engine alone, plain rows,
:mod:`llama_index_video.store.chroma_engine`) read Chroma with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from llama_index_video import schema
from llama_index_video.store.media_paths import resolved_path
from llama_index_video.stored import Scored, StoredMoment

Visible = Callable[[Collection[str]], set[str]]
"""Given content hashes, those whose rows are complete (the manifest's)."""


def ranked_batches(
    collection: Any,
    embedding: Sequence[float],
    *,
    top_k: int,
    threshold: float | None,
    first: int,
    read: Callable[[list[str]], Sequence[Any]],
    scored: Callable[[Any, float], Any] = Scored,
    where: dict[str, Any] | None = None,
) -> Iterator[list[Any]]:
    """The best ``top_k`` rows of ``collection`` (a ``chromadb.Collection`` or Chroma's
    engine) for ``embedding``, best first, scored by cosine similarity, in batches.

    One query ranks the candidates by distance alone (those below ``threshold`` are
    never read); the first batch reads (``read``: ids to nodes) the rows of the best
    ``first`` of them, each later batch twice as many as the one before. A row
    deleted since the query (by a writer removing its file) is left out. ``scored``
    makes a hit of a node and its similarity.
    """
    if first < 1:
        raise ValueError(f"first must be >= 1, got {first}")
    found = collection.query(
        query_embeddings=[list(embedding)],
        n_results=top_k,
        where=where,
        include=["distances"],
    )
    ranked = [
        (node_id, cosine_from_chroma(math.exp(-distance)))
        for node_id, distance in zip(found["ids"][0], found["distances"][0], strict=True)
    ]
    if threshold is not None:
        ranked = [(i, s) for i, s in ranked if s >= threshold]
    start, size = 0, first
    while start < len(ranked):
        batch = ranked[start : start + size]
        rows = {node.node_id: node for node in read([i for i, _ in batch])}
        yield [scored(rows[i], s) for i, s in batch if i in rows]
        start, size = start + size, size * 2


def chroma_filter(
    modalities: Sequence[str] | None = None,
    speakers: Sequence[str] | None = None,
    contents: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """The ``where`` of moments of these modalities, speakers, contents and languages
    (None: any), as ``ChromaVectorStore`` writes LlamaIndex's ``IN`` filters."""
    clauses = [
        {key: {"$in": list(values)}}
        for key, values in wanted_metadata(modalities, speakers, contents, languages)
        if values
    ]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def wanted_metadata(
    modalities: Sequence[str] | None,
    speakers: Sequence[str] | None,
    contents: Sequence[str] | None,
    languages: Sequence[str] | None,
) -> list[tuple[str, Sequence[str] | None]]:
    """Each metadata key a search filters on, with the values it keeps (None: any)."""
    return [
        (schema.MODALITY, modalities),
        (schema.SPEAKER, speakers),
        (schema.CONTENT_HASH, contents),
        (schema.LANGUAGE, languages),
    ]


def in_languages(node: Any, languages: Collection[str] | None) -> bool:
    """Whether ``node`` was heard in one of ``languages`` (None: any); a moment with no
    language (a frame, on-screen text, a document) is in none."""
    return languages is None or node.metadata.get(schema.LANGUAGE) in languages


class CollectionRetriever:
    """Top-k moments of a Chroma collection, its candidates read batch by batch
    (:func:`ranked_batches`): ``VideoRetriever``'s way on Chroma, and the command line's
    one-shot search over Chroma's engine (plain rows, no LlamaIndex).

    Args:
        collection: The collection (``query`` with ``where``).
        read: Ids to nodes (:class:`~llama_index_video.stored.StoredMoment`\\ s, or
            LlamaIndex's nodes).
        scored: Makes a hit of a node and its similarity.
        top_k, modalities, threshold, visible, speakers, contents, languages, folder: As
            :class:`~llama_index_video.search.retriever.VideoRetriever` takes them.
    """

    def __init__(
        self,
        collection: Any,
        read: Callable[[list[str]], Sequence[Any]],
        *,
        scored: Callable[[Any, float], Any] = Scored,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        threshold: float | None = None,
        visible: Visible | None = None,
        speakers: Sequence[str] | None = None,
        contents: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        folder: Path | None = None,
    ) -> None:
        check_options(top_k, modalities)
        self._collection = collection
        self._read = read
        self._scored = scored
        self._top_k = top_k
        self._where = chroma_filter(modalities, speakers, contents, languages)
        self.threshold = threshold
        self._visible = visible
        self._folder = folder

    def retrieve(self, query_bundle: Any) -> list[Any]:
        """Every hit, best first (the query must carry its embedding)."""
        return [
            hit for batch in self.ranked_batches(query_bundle, first=self._top_k) for hit in batch
        ]

    def ranked_batches(self, query_bundle: Any, *, first: int) -> Iterator[list[Any]]:
        """The hits of :meth:`retrieve` in batches (:func:`ranked_batches`)."""
        if query_bundle.embedding is None:
            raise ValueError("CollectionRetriever needs the query's embedding")
        for batch in ranked_batches(
            self._collection,
            query_bundle.embedding,
            top_k=self._top_k,
            threshold=self.threshold,
            first=first,
            read=self._read,
            scored=self._scored,
            where=self._where,
        ):
            yield kept(batch, self._visible, self._folder)


def check_options(top_k: int, modalities: Sequence[str] | None) -> None:
    """``ValueError`` for a ``top_k`` under 1 or an unknown modality."""
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    unknown = set(modalities or ()) - set(schema.MODALITIES)
    if unknown:
        raise ValueError(
            f"unknown modality {sorted(unknown)}; choose from {', '.join(schema.MODALITIES)}"
        )


def kept(hits: list[Any], visible: Visible | None, folder: Path | None) -> list[Any]:
    """The hits of visible contents (all if ``visible`` is None), their media paths
    resolved against ``folder`` (as stored if None)."""
    if visible is not None and hits:
        complete = visible({_content(hit) for hit in hits})
        hits = [hit for hit in hits if _content(hit) in complete]
    if folder is not None:
        for hit in hits:
            hit.node = resolved_moment(hit.node, folder)
    return hits


def resolved_moment(node: Any, folder: Path) -> Any:
    """A stored node (a :class:`~llama_index_video.stored.StoredMoment` or a LlamaIndex
    node) with its media paths resolved against ``folder``."""
    if isinstance(node, StoredMoment):
        return node.with_media_paths(lambda path: resolved_path(path, folder))
    from llama_index_video.store.folder_index import resolved_node

    return resolved_node(node, folder)


def cosine_from_chroma(score: float) -> float:
    """The cosine similarity behind LlamaIndex's Chroma score, ``exp(-distance)``."""
    return 1.0 + math.log(score)


def _content(hit: Any) -> str:
    return str(hit.node.metadata.get(schema.CONTENT_HASH, ""))
