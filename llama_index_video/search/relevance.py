"""Is what search found relevant enough to answer from? The rejection signal.

A single cosine cut cannot tell "the index answers this" from "the index is about
this topic": with all-MiniLM-L6-v2, questions no recording answers but that sit near
a recording's topic reach cosine 0.32-0.34 with its moments, while answerable
questions reach 0.26-0.34 only. What separates them is whether the moments found say
what the question asks about. :class:`RelevanceGate` combines two signals of the
best hits:

- ``similarity``: the best cosine similarity among them, as before;
- ``coverage``: the share of the question's content words that the text handed on
  (the hits and their context units) contains, each word weighted by how
  *distinctive* it is among the hits: a word every hit contains (the topic,
  "ozone") weighs little, a word no hit contains (the specific thing asked,
  "Arctic") weighs most. A near-topic question misses its distinctive words;
  an answerable one, even paraphrased, keeps some.

- ``standout``: how many standard deviations the best candidate's cosine stands above
  the mean of the candidates from its own recording (the query's best 50 among that
  recording's nodes). A near-topic question matches every moment of the recording
  about as well; an answerable one matches one moment clearly better. Unlike the
  cosine, or a margin over the typical hit of the whole index, it does not move with
  the embedding model's similarity scale or with what else the library holds.

The query passes when ``signal + weight * coverage >= cut``, the signal being
``similarity`` or ``standout``. A recording too short for a spread has no say: the
z-score of the best of one value is 0 and of two different values exactly 1, whatever
they are, so with fewer than ``SPREAD_CANDIDATES`` candidates the standout says nothing
about the question and the gate would decide by coverage alone, at a cut not fitted
for that (the calibrated gate turned away 3 of the 7 answerable questions about a
two-unit recording, and could never answer from a one-unit one). There a standout gate
abstains: the hits that passed the similarity threshold are answered from, as without
a gate. From three candidates on the standout varies (up to ``sqrt(n - 1)``); on a
four-unit document the calibrated gate answered 5 of 5 and rejected 3 of 4 found
(docs/evaluation.md).

The weight and cut are calibrated per embedding model
(``python benchmarks/rejection_signals.py``: fitted on ``benchmarks/questions.json``,
checked on two held-out recordings, alone and inside a library; see
docs/evaluation.md) and kept beside the thresholds, in
``llama_index_video.search.policy.DEFAULT_GATES``.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from llama_index_video.results import SearchHit

DEPTH = 3
"""How many of the best hits the signals look at (as many as an answer quotes)."""

SPREAD_CANDIDATES = 3
"""The fewest candidates of a recording whose standout varies (see the module docstring)."""

STEM_LENGTH = 5
"""Words agree when they agree in their first letters ("absorbs" ~ "absorption")."""

# Function words and the verbs every question uses; what is left is what it asks about.
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing done down during each few
for from further get gets got had has have having he her here hers him his how i if in
into is it its itself just me more most my no nor not now of off on once only or other
our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours s t many much one ever
also us let lets like know tell say said mean means happen happens happened use used
using make made way thing things kind
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning, stemmed, each once, in order."""
    words = (w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)
    return list(dict.fromkeys(w[:STEM_LENGTH] for w in words if len(w) > 1 or w.isdigit()))


def coverage(question: str, texts: Sequence[str]) -> float:
    """Share of the question's content words found in ``texts``, weighted by distinctiveness.

    A word's weight is ``log((n + 1) / (found_in + 0.5))`` over the ``n`` texts: the
    fewer texts contain it, the more it says about whether they answer the question.
    The share is of the total weight found in any text; 1.0 for a question with no
    content words (nothing to contradict).
    """
    wanted = content_words(question)
    if not wanted:
        return 1.0
    vocabularies = [set(content_words(text)) for text in texts]
    found_in = {w: sum(w in vocabulary for vocabulary in vocabularies) for w in wanted}
    weight = {w: math.log((len(texts) + 1) / (found_in[w] + 0.5)) for w in wanted}
    total = sum(weight.values())
    return sum(weight[w] for w in wanted if found_in[w]) / total


def hit_text(hit: SearchHit) -> str:
    """The text a hit hands on: its own and its context units'."""
    return " ".join([hit.text or "", *(unit.text for unit in hit.context)])


def standout(cosines: Sequence[float]) -> float:
    """How many standard deviations the best of ``cosines`` stands above their mean.

    0.0 for fewer than two values or no spread: nothing stands out.
    """
    if len(cosines) < 2:
        return 0.0
    spread = statistics.pstdev(cosines)
    return (max(cosines) - statistics.mean(cosines)) / spread if spread > 0 else 0.0


@dataclass(frozen=True)
class Relevance:
    """The signals of one query's best hits (see the module docstring)."""

    similarity: float
    coverage: float
    standout: float = 0.0

    @classmethod
    def of(
        cls,
        question: str,
        hits: Sequence[SearchHit],
        *,
        depth: int = DEPTH,
        recording: Sequence[float] = (),
    ) -> Relevance:
        """The signals of ``hits``; ``recording``: the cosine similarities of the query's
        candidates from its best candidate's recording (for ``standout``)."""
        best = list(hits[:depth])
        cosines = [hit.score for hit in best if hit.score is not None]
        return cls(
            similarity=max(cosines, default=0.0),
            coverage=coverage(question, [hit_text(hit) for hit in best]) if best else 0.0,
            standout=standout(recording),
        )


Signal = Literal["similarity", "standout"]


@dataclass(frozen=True, kw_only=True)
class RelevanceGate:
    """Accepts a query's hits when ``signal + weight * coverage >= cut``.

    Attributes:
        weight: How much coverage counts against the signal.
        cut: The least combined score of an answerable query.
        signal: ``"similarity"`` (the best hits' cosine) or ``"standout"`` (how far the
            best candidate stands out in its own recording; the searcher then needs
            that recording's candidate similarities).
    """

    weight: float
    cut: float
    signal: Signal = "similarity"

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ValueError(f"weight must be >= 0, got {self.weight}")
        if self.signal not in ("similarity", "standout"):
            raise ValueError(f"signal must be 'similarity' or 'standout', got {self.signal!r}")

    @property
    def needs_recording(self) -> bool:
        """Whether ``accepts`` needs the candidates of the best candidate's recording."""
        return self.signal == "standout"

    def abstains(self, recording: Sequence[float]) -> bool:
        """Whether a standout gate has no say: the recording has fewer than
        ``SPREAD_CANDIDATES`` candidates, too few for a spread (see the module
        docstring); then :meth:`accepts` lets through whatever passed the threshold."""
        return self.needs_recording and len(recording) < SPREAD_CANDIDATES

    def score(self, relevance: Relevance) -> float:
        return getattr(relevance, self.signal) + self.weight * relevance.coverage

    def accepts(
        self, question: str, hits: Sequence[SearchHit], *, recording: Sequence[float] = ()
    ) -> bool:
        """Whether ``hits`` are relevant enough to answer ``question`` from.

        ``recording``: see :meth:`Relevance.of`; a standout gate abstains (accepts)
        when it holds fewer than ``SPREAD_CANDIDATES`` values.
        """
        if not hits:
            return False
        if self.abstains(recording):
            return True
        return self.score(Relevance.of(question, hits, recording=recording)) >= self.cut
