"""The lexical channel: moments that contain the query's exact words, numbers and phrases.

:class:`LexicalRetriever` is a retriever over the index folder's lexical index
(:mod:`llama_index_video.store.lexical`): BM25 over every node's words (the transcript,
on-screen text, documents, frames' text), returning the vector store's own nodes (read
by id), so it fuses with the dense channels like any other channel.

Its score is a *lexical match* in (0, 1]: the node's BM25 score over the best BM25
score any node reaches for each of the query's words, summed; a word no node holds
counts as much as the index's rarest word. 1 means the node holds every word of the
query as strongly as any node does; a node holding only the query's rarest word scores
its share of the query's weight, and a query about something the index never mentions
(its distinctive word unknown) scores low everywhere. Words every node holds (and
English stop words) weigh nothing, so a question's phrasing does not count, its names
and numbers do. Hits under ``threshold`` are dropped, as the dense channels drop hits
under their cosine threshold.

A quoted phrase (``"gym floor"``, straight or curly quotes) must appear literally:
those words, in that order, with nothing between them (case, accents and punctuation
aside, see :func:`~llama_index_video.store.tokens.words`). :func:`parse_query` splits
them off, :func:`has_phrases` is the test every channel's hits pass
(:mod:`llama_index_video.search.fusion`), and this channel only ranks nodes that pass
it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_index_video.search.candidates import Visible, in_languages, kept
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.tokens import words
from llama_index_video.stored import Scored

LEXICAL_CHANNEL = "lexical"
"""The fusion channel of the query's exact words."""
# Calibrated with `benchmarks/evaluate.py --lexical grid` (docs/evaluation.md): of
# weights 0.25-1 and least matches 0.3-0.7, 1 and 0.5 improved the example questions
# (R@1 0.88 -> 0.93, R@3 0.90 -> 0.93) and left both held-out sets as they were; a
# least match of 0.45 or below won one held-out question and lost another.
LEXICAL_WEIGHT = 1.0
"""Its default weight: a full lexical match adds as much as a cosine of 1."""
LEXICAL_THRESHOLD = 0.5
"""The least lexical match of a hit by default."""

_QUOTED = re.compile(r'"([^"]*)"|\u201c([^\u201d]*)\u201d')


@dataclass(frozen=True)
class LexicalQuery:
    """A query as the lexical channel reads it."""

    words: tuple[str, ...]  # every word, quoted ones too
    phrases: tuple[tuple[str, ...], ...]  # the quoted phrases' words


def parse_query(query: str) -> LexicalQuery:
    """The words of ``query`` and its quoted phrases (an empty pair of quotes is ignored)."""
    phrases = []
    for match in _QUOTED.finditer(query):
        phrase = tuple(words(match.group(1) or match.group(2) or ""))
        if phrase:
            phrases.append(phrase)
    return LexicalQuery(tuple(words(query)), tuple(phrases))


def has_phrases(text: str, phrases: Sequence[Sequence[str]]) -> bool:
    """Whether ``text`` contains every phrase as a run of whole words."""
    if not phrases:
        return True
    padded = f" {' '.join(words(text))} "
    return all(f" {' '.join(phrase)} " in padded for phrase in phrases)


class LexicalRetriever:
    """The best moments by lexical match (module docstring), as the vector store's nodes.

    Args:
        lexical: The index folder's lexical index.
        read: Ids to the nodes the hits are (those missing left out).
        top_k: How many hits to return at most.
        modalities: Only these modalities; None: all.
        speakers: Only transcript units spoken by these; None: anyone.
        languages: Only moments heard in these languages (Whisper codes; a moment with
            no language is left out); None: any.
        contents: Only nodes of these contents (content hashes); None: every file.
        threshold: The least lexical match of a hit; None keeps every match.
        visible: Given the hits' content hashes, returns those whose rows are complete
            (as ``VideoRetriever``'s); None keeps every hit.
        folder: The index folder the stored media paths are relative to.
    """

    def __init__(
        self,
        lexical: LexicalStore,
        read: Callable[[list[str]], Sequence[Any]],
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        contents: Sequence[str] | None = None,
        threshold: float | None = None,
        visible: Visible | None = None,
        folder: Path | None = None,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        self._lexical = lexical
        self._read = read
        self._top_k = top_k
        self._modalities = list(modalities) if modalities else None
        self._speakers = list(speakers) if speakers else None
        self._languages = sorted(set(languages)) if languages else None
        self._contents = list(contents) if contents else None
        self.threshold = threshold
        self._visible = visible
        self._folder = folder

    def retrieve(self, query_bundle: Any) -> list[Scored]:
        """The moments holding the query's words, best first (only ``query_str`` is read)."""
        query = parse_query(query_bundle.query_str)
        snapshot = self._lexical.snapshot()
        if snapshot is None or not query.words:
            return []
        only = self._lexical.nodes_of(self._contents) if self._contents else None
        if query.phrases:
            holding = snapshot.holding(word for phrase in query.phrases for word in phrase)
            if only is not None:
                holding = only if holding is None else only & holding
            only = self._lexical.with_phrases(query.phrases, among=holding)
        if only is not None and not only:
            return []
        if self._languages is not None:
            self._lexical.warn_unlabelled(snapshot)
        found = snapshot.search(
            query.words,
            top_k=self._top_k,
            modalities=self._modalities,
            speakers=self._speakers,
            languages=self._languages,
            only=only,
        )
        if self.threshold is not None:
            found = [hit for hit in found if hit.score >= self.threshold]
        if not found:
            return []
        rows = {node.node_id: node for node in self._read([h.node_id for h in found])}
        # A row deleted since the matrices were built (its file removed) is left out, and
        # one whose language the matrices do not know (recorded before languages were,
        # LexicalSnapshot.unlabelled) is kept there and checked here, on its stored row.
        hits = [
            Scored(rows[h.node_id], h.score)
            for h in found
            if h.node_id in rows and in_languages(rows[h.node_id], self._languages)
        ]
        return kept(hits, self._visible, self._folder)
