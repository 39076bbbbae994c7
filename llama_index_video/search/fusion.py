"""One ranking over speech, screen text and pixels, in two steps.

Each :class:`Channel` is a retriever over one modality (transcript units, OCR text,
frames by their text, frames by their pixels, ...) with a weight.

1. **Channels of one embedding model are blended by weighted cosine** (:func:`blend`):
   their similarities share one scale, so a hit scores ``weight * similarity`` and a
   node found by several channels keeps its best. With one model (the usual case:
   transcript, OCR and frame text all embedded by MiniLM) this is the whole ranking.
2. **Models are fused by weighted reciprocal rank** (:func:`fuse`), only when the
   channels come from more than one model (text search plus CLIP visual search): a
   node's fused score is the sum over the models' blended lists of
   ``weight / (k + rank)`` (rank from 1; ``k = 60`` as in Cormack et al., 2009). Ranks
   are compared there because cosines from different models (MiniLM text-text, CLIP
   text-image) are not on one scale. Equal fused scores go to the higher similarity.

**The lexical channel** (:mod:`llama_index_video.search.lexical`: the query's exact
words, by BM25) joins the blend of the text model as an *adding* channel
(``Channel.adds``): its score, a lexical match in (0, 1] rather than a cosine, is
weighted and **added** to the node's best weighted cosine, so a node whose meaning and
words both match beats one that has only either, and a moment whose exact words match
strongly can outrank moments whose meaning is only near the query. A node found by its
words alone scores its weighted lexical match, and its ``similarity`` is that match.
Its hits are not ranked by similarity against the dense ones, so the early stop below
adds the best weighted lexical match found to every dense retriever's bound.
**Quoted phrases** in the query (``"gym floor"``) must appear literally: every
channel's hits are filtered by them before they are blended (:meth:`Channel.keep`).

Scores and the threshold: every channel applies its own relevance threshold to its
own cosine similarities *before* fusion, so nothing below it enters the ranking and
an index with nothing relevant still returns nothing. A fused hit's ``score`` is the
fused score (descending, as LlamaIndex expects of retrievers); the cosine similarity
from the channel that contributed most is kept beside it, as the hit's ``similarity``
(:class:`~llama_index_video.stored.Scored`). The node itself is not touched: a node's
hash covers its metadata, and LlamaIndex de-duplicates by hash
(``QueryFusionRetriever`` over several phrasings), so writing a per-query number into
metadata would split one node in two. Postprocessors build new ``NodeWithScore``
objects, so :func:`similarities` maps node ids to similarities before they run.

The query is embedded once per embedding model (``Channel.embed_model``) and handed
to every channel of that model, so six text channels cost one query embedding.

With one model, only the hits that can reach the top ``top_k`` are needed: a hit's
blended score is at most its similarity times the largest weight of its channels, and
a retriever ranks best first, so once the ``top_k``-th best score seen exceeds that
bound for the next hit of every retriever, the rest cannot change the result. A
retriever with ``ranked_batches`` (:class:`RankedRetriever`, e.g. ``VideoRetriever``)
is read in batches until then; on Chroma this skips reading most candidates' rows.

Why not LlamaIndex's ``QueryFusionRetriever(mode="reciprocal_rerank")`` for step 2: in
llama-index-core 0.14.25 that mode ignores ``retriever_weights``
(run-llama/llama_index#21444), keys nodes by content hash (an ``ImageNode``'s hash
ignores its metadata, so two frames of one slide collapse), overwrites the scores so
the similarity is lost, and needs an LLM object even with ``num_queries=1``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from llama_index_video import schema
from llama_index_video.search.lexical import has_phrases, parse_query
from llama_index_video.stored import Query, Scored

RRF_K = 60.0


class Retriever(Protocol):
    """Returns hits for a query, best first (any LlamaIndex retriever is one)."""

    def retrieve(self, query: Any) -> Sequence[Any]: ...


class QueryEmbedding(Protocol):
    """Embeds a query (any LlamaIndex embedding, or the ONNX encoder alone)."""

    def get_query_embedding(self, query: str) -> list[float]: ...


@dataclass(frozen=True)
class Channel:
    """One ranked list to fuse.

    Attributes:
        name: What it ranks, e.g. ``"transcript"``, ``"ocr"`` or ``"visual"``.
        retriever: Returns the channel's hits, best first, scored by similarity.
        weight: Its share in the fused score (0 mutes it).
        embed_model: The model its retriever embeds queries with; channels sharing a
            model get the query embedded once.
        modality: Keep only the retriever's hits of this modality; channels sharing
            a retriever then share one query, split by modality.
        adds: Its weighted score is added to a node's best one of the other channels
            (the lexical channel: evidence of another kind), not compared with it.
    """

    name: str
    retriever: Retriever
    weight: float = 1.0
    embed_model: Any = None
    modality: str | None = None
    adds: bool = False

    def keep(self, hits: list[Any], phrases: Sequence[Sequence[str]] = ()) -> list[Any]:
        """The channel's share of its retriever's hits: of its modality, and containing
        the query's quoted ``phrases`` (:func:`~llama_index_video.search.lexical.has_phrases`)."""
        if self.modality is not None:
            hits = [h for h in hits if h.node.metadata.get(schema.MODALITY) == self.modality]
        if phrases:
            hits = [h for h in hits if has_phrases(h.node.get_content(), phrases)]
        return hits

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ValueError(f"weight of channel {self.name!r} must be >= 0, got {self.weight}")


class RankedRetriever(Protocol):
    """A retriever that can hand its hits over in batches, best first."""

    def ranked_batches(self, query_bundle: Any, *, first: int) -> Iterator[list[Any]]:
        """The hits ``retrieve`` returns, in its order (similarity descending), in batches
        of at least ``first`` (but the last), read as they are asked for."""
        ...


class FusionRetriever:
    """Channels blended by weighted cosine per model, models fused by rank (module docstring).

    Its hits are :class:`~llama_index_video.stored.Scored`: the fused score and the
    similarity behind it (``Querying.as_retriever`` gives them to LlamaIndex as nodes,
    :mod:`llama_index_video.search.node_retriever`).

    Args:
        channels: The retrievers to fuse, with their weights.
        top_k: How many fused hits to return at most.
        k: The RRF constant: larger values flatten the difference between ranks.
        query: Makes of a question (a string) the query the channels' retrievers take
            (LlamaIndex's ``QueryBundle`` for LlamaIndex retrievers).
    """

    def __init__(
        self,
        channels: Sequence[Channel],
        *,
        top_k: int = 5,
        k: float = RRF_K,
        query: Callable[[str], Any] = Query,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if k <= 0:
            raise ValueError(f"k must be > 0, got {k}")
        names = [c.name for c in channels]
        if len(set(names)) != len(names):
            raise ValueError(f"channel names must be unique, got {names}")
        self.channels = tuple(channels)
        self.top_k = top_k
        self.k = k
        self.query = query

    def retrieve(self, query_bundle: Any) -> list[Scored]:
        """The fused hits for a query: a string (made a query by ``query``), a
        :class:`~llama_index_video.stored.Query` or a LlamaIndex ``QueryBundle`` (given
        to each channel's retriever as it came, with the embedding of the channel's
        model)."""
        query_bundle = as_query(query_bundle, self.query)
        texts = query_bundle.embedding_strs
        vectors = {id(m): _query_vector(m, texts) for m in self._models()}
        _keep_embedding(query_bundle, vectors)
        retrievers = self._retrievers()
        bundles = {
            key: _bundle(query_bundle, vectors.get(id(c.embed_model)))
            for key, c in retrievers.items()
        }
        phrases = parse_query(query_bundle.query_str).phrases
        if len(self._groups()) <= 1:
            return self._best_of_one_model(retrievers, bundles, phrases)
        found = {key: list(c.retriever.retrieve(bundles[key])) for key, c in retrievers.items()}
        return self._combine([c.keep(found[id(c.retriever)], phrases) for c in self.channels])

    def _best_of_one_model(
        self,
        retrievers: dict[int, Channel],
        bundles: dict[int, Any],
        phrases: Sequence[Sequence[str]],
    ) -> list[Scored]:
        """``_combine`` of every hit, reading each retriever only as far as can matter."""
        weights = {
            key: [c.weight for c in self.channels if id(c.retriever) == key and c.weight > 0]
            for key in bundles
        }
        found: dict[int, list[Any]] = {key: [] for key in bundles}
        batches: dict[int, Iterator[list[Any]]] = {}
        for key, channel in retrievers.items():
            if not weights[key]:
                continue  # its channels are muted
            # Not isinstance(..., RankedRetriever): a runtime protocol check costs more
            # than the rest of this loop.
            ranked = getattr(channel.retriever, "ranked_batches", None)
            if ranked is not None:
                batches[key] = ranked(bundles[key], first=2 * self.top_k)
            else:
                found[key] = list(channel.retriever.retrieve(bundles[key]))
        # The most an adding channel can lift a hit not read yet.
        bonus = max(
            (
                c.weight * (h.score or 0.0)
                for c in self.channels
                if c.adds
                for h in found[id(c.retriever)]
            ),
            default=0.0,
        )
        while True:  # each round reads a batch of, or drops, at least one retriever
            fused = self._combine([c.keep(found[id(c.retriever)], phrases) for c in self.channels])
            last = fused[self.top_k - 1].score if len(fused) >= self.top_k else None
            wanted = [
                key
                for key in batches
                if last is None or last <= _ceiling(found[key], weights[key]) + bonus
            ]
            if not wanted:
                return fused
            for key in wanted:
                batch = next(batches[key], None)
                if batch is None:
                    del batches[key]
                else:
                    found[key].extend(batch)

    async def aretrieve(self, query_bundle: Any) -> list[Scored]:
        """:meth:`retrieve`, the query embedded and the channels asked through their async
        APIs."""
        query_bundle = as_query(query_bundle, self.query)
        models = self._models()
        texts = query_bundle.embedding_strs
        embedded = await asyncio.gather(*(m.aget_agg_embedding_from_queries(texts) for m in models))
        vectors = {id(m): v for m, v in zip(models, embedded, strict=True)}
        _keep_embedding(query_bundle, vectors)
        retrievers = self._retrievers()
        results = await asyncio.gather(
            *(
                aretrieved(c.retriever, _bundle(query_bundle, vectors.get(id(c.embed_model))))
                for c in retrievers.values()
            )
        )
        found = {key: list(hits) for key, hits in zip(retrievers, results, strict=True)}
        phrases = parse_query(query_bundle.query_str).phrases
        return self._combine([c.keep(found[id(c.retriever)], phrases) for c in self.channels])

    def _retrievers(self) -> dict[int, Channel]:
        """One channel per distinct retriever: each retriever is queried once."""
        distinct: dict[int, Channel] = {}
        for channel in self.channels:
            distinct.setdefault(id(channel.retriever), channel)
        return distinct

    def _groups(self) -> set[int]:
        """The embedding models whose channels count, by id."""
        return {id(c.embed_model) for c in self.channels if c.weight > 0}

    def _combine(self, results: Sequence[list[Any]]) -> list[Scored]:
        """Blend channels of one model by weighted similarity, then fuse models by rank."""
        groups: dict[int, list[tuple[Channel, list[Any]]]] = {}
        for channel, hits in zip(self.channels, results, strict=True):
            if channel.weight > 0:
                groups.setdefault(id(channel.embed_model), []).append((channel, hits))
        if len(groups) <= 1:
            return blend(next(iter(groups.values()), []), top_k=self.top_k)
        ranked = [
            (max(channel.weight for channel, _ in group), blend(group, top_k=None))
            for group in groups.values()
        ]
        return fuse(ranked, k=self.k, top_k=self.top_k)

    def _models(self) -> list[Any]:
        """The distinct embedding models of the channels that count."""
        models: dict[int, Any] = {}
        for channel in self.channels:
            if channel.embed_model is not None and channel.weight > 0:
                models.setdefault(id(channel.embed_model), channel.embed_model)
        return list(models.values())


def blend(channels: Sequence[tuple[Channel, list[Any]]], *, top_k: int | None) -> list[Scored]:
    """One list from channels whose similarities share a scale (the same embedding model).

    Each hit scores ``weight * similarity``; a node found by several channels keeps its
    best. Channels that ``adds`` (the lexical one) add their ``weight * score`` to it
    instead. The result is ordered by that score and keeps the similarity itself (for
    a node only an adding channel found, that channel's score).
    """
    best: dict[str, Scored] = {}
    extra: dict[str, Scored] = {}  # the best hit of the adding channels, per node
    for channel, hits in channels:
        for hit in hits:
            similarity = hit.score or 0.0
            score = channel.weight * similarity
            node_id = hit.node.node_id
            if channel.adds:
                known_extra = extra.get(node_id)
                if known_extra is None or score > (known_extra.score or 0.0):
                    extra[node_id] = Scored(hit.node, score)
                continue
            known = best.get(node_id)
            if known is None or score > (known.score or 0.0):
                best[node_id] = Scored(hit.node, score, similarity)
    for node_id, added in extra.items():
        share = added.score or 0.0
        known = best.get(node_id)
        if known is None:  # found by its words alone: its lexical match stands for both
            weight = max((c.weight for c, _ in channels if c.adds), default=1.0) or 1.0
            best[node_id] = Scored(added.node, share, share / weight)
        else:
            known.score = (known.score or 0.0) + share
    ordered = sorted(best.values(), key=lambda h: h.score or 0.0, reverse=True)
    return list(ordered if top_k is None else ordered[:top_k])


def fuse(
    ranked: Sequence[tuple[float, list[Any]]], *, k: float = RRF_K, top_k: int
) -> list[Scored]:
    """Fuse ranked hit lists into one (see the module docstring).

    Args:
        ranked: Each channel's weight and hits (similarity scores; ordered here).
        k: The RRF constant.
        top_k: How many hits to return at most.

    Returns:
        The hits, best first, scored by fused score, with the similarity of the
        channel that contributed most.
    """
    fused: dict[str, float] = {}
    strongest: dict[str, tuple[float, Any]] = {}
    for weight, hits in ranked:
        if weight == 0:
            continue
        ordered = sorted(hits, key=lambda h: h.score if h.score is not None else 0.0, reverse=True)
        for rank, hit in enumerate(ordered, start=1):
            node_id = hit.node.node_id
            share = weight / (k + rank)
            fused[node_id] = fused.get(node_id, 0.0) + share
            if node_id not in strongest or share > strongest[node_id][0]:
                strongest[node_id] = (share, hit)

    def order(node_id: str) -> tuple[float, float]:
        return fused[node_id], _similarity(strongest[node_id][1]) or 0.0

    best = sorted(fused, key=order, reverse=True)[:top_k]
    return [
        Scored(strongest[node_id][1].node, fused[node_id], _similarity(strongest[node_id][1]))
        for node_id in best
    ]


def as_query(query: Any, make: Callable[[str], Any]) -> Any:
    """``query`` as retrievers take it: a string made one by ``make``, else itself."""
    return make(query) if isinstance(query, str) else query


async def aretrieved(retriever: Retriever, query_bundle: Any) -> Sequence[Any]:
    """``retriever``'s hits through its own async ``aretrieve``, else its ``retrieve``."""
    asynchronous = getattr(type(retriever), "aretrieve", None)
    if asynchronous is None:
        return retriever.retrieve(query_bundle)
    return list(await asynchronous(retriever, query_bundle))


def _ceiling(hits: list[Any], weights: list[float]) -> float:
    """The best blended score a retriever's hits after ``hits`` (read best first) can get."""
    if not hits:
        return math.inf
    similarity = hits[-1].score or 0.0
    return max(weight * similarity for weight in weights)


def _similarity(hit: Any) -> float | None:
    similarity = getattr(hit, "similarity", None)
    return hit.score if similarity is None else float(similarity)


def similarities(hits: Sequence[Any]) -> dict[str, float]:
    """Node id -> similarity of the fused hits among ``hits``, to outlive postprocessing."""
    return {
        h.node.node_id: h.similarity for h in hits if getattr(h, "similarity", None) is not None
    }


def _query_vector(model: Any, texts: list[str]) -> list[float]:
    """``model.get_agg_embedding_from_queries(texts)``; for one text, without its mean over
    one vector (the same numbers, without a round trip through numpy)."""
    if len(texts) == 1:
        return model.get_query_embedding(texts[0])
    return model.get_agg_embedding_from_queries(texts)


def _keep_embedding(query_bundle: Any, vectors: dict[int, list[float]]) -> None:
    """Leave the query's embedding in the caller's bundle, as LlamaIndex's own retrievers
    do, when one model embedded it (with two there is no one embedding to leave), so a
    caller querying the same store again does not embed the query twice."""
    if query_bundle.embedding is None and len(vectors) == 1:
        query_bundle.embedding = next(iter(vectors.values()))


def _bundle(query_bundle: Any, vector: list[float] | None) -> Any:
    """A copy per channel: LlamaIndex's retrievers store the embedding they compute in it."""
    return replace(query_bundle, embedding=vector)
