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
``llama_index_video.search.policy.STANDOUT_GATES``.

**Confidence** (the default since issue 35): each hit gets the probability that it
answers the question, from a logistic model (:class:`Calibration`) over the signals
of :data:`FEATURES`, fitted leave-one-set-out by ``benchmarks/relevance_fit.py`` on
every question set (docs/evaluation.md). :class:`ConfidenceGate` turns a query away
when its best hit's confidence is under ``cut``; ``sure`` is the lower bar under which
the gate is sure nothing answers (what ``ask`` with a model uses: the model decides
the rest).
"""

from __future__ import annotations

import math
import re
import statistics
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from llama_index_video.results import SearchHit
from llama_index_video.store import tokens
from llama_index_video.store.bm25 import LexicalSnapshot

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
    weight, vocabularies = word_weights(question, texts)
    return _share(weight, set().union(*vocabularies))


def word_weights(question: str, texts: Sequence[str]) -> tuple[dict[str, float], list[set[str]]]:
    """Each content word of ``question`` with its distinctiveness weight over ``texts``
    (see :func:`coverage`), and each text's content words."""
    vocabularies = [set(content_words(text)) for text in texts]
    wanted = content_words(question)
    found_in = {w: sum(w in vocabulary for vocabulary in vocabularies) for w in wanted}
    weight = {w: math.log((len(texts) + 1) / (found_in[w] + 0.5)) for w in wanted}
    return weight, vocabularies


def _share(weight: dict[str, float], words: set[str]) -> float:
    """The share of the total ``weight`` that ``words`` hold; 1.0 with nothing weighed."""
    total = sum(weight.values())
    return sum(v for w, v in weight.items() if w in words) / total if weight else 1.0


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


_NUMBER_QUESTION = re.compile(
    r"\b(how (many|much|long|high|far|fast|old|often|thick|big|tall)|what (year|time|percentage"
    r"|date|number)|when|which year)\b"
)
# Words that say a number, a day or a month ("may" is left out: mostly the verb).
_NUMBER_TEXT = """
one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
fifty sixty seventy eighty ninety hundred thousand million half once twice percent monday
tuesday wednesday thursday friday saturday sunday january february march april june july
august september october november december noon midnight
"""
_NUMBER_WORDS = frozenset(_NUMBER_TEXT.split())

FEATURES = (
    "cosine",
    "lexical",
    "own_coverage",
    "similarity",
    "coverage",
    "gap",
    "asked_for",
    "asked_name",
    "absent",
)
"""The signals of one hit that its confidence is computed from (:func:`hit_features`)."""


_NAME_QUESTION = re.compile(
    r"\b(who|whom|whose|where|what (is|was|are|were) (the|its|his|her|their) names?|which "
    r"(company|city|town|country|brand|person|firm|supplier|newspaper|university|museum|"
    r"library|team|court|website|hotel|shop|store|airline|bank))\b"
)
# A capitalised word after another word of the same sentence: a name, not a sentence start.
_NAME = re.compile(r"(?<=[a-z0-9,;:] )[A-Z][a-z]+")


def asks_for_name(question: str) -> bool:
    """Whether ``question`` asks for a name: a person, a place, an organisation."""
    return bool(_NAME_QUESTION.search(question.lower()))


def holds_name(text: str) -> bool:
    """Whether ``text`` holds a capitalised word inside a sentence (a name)."""
    return bool(_NAME.search(text))


def asks_for_number(question: str) -> bool:
    """Whether ``question`` asks for a number, an amount, a date or a time."""
    return bool(_NUMBER_QUESTION.search(question.lower()))


def holds_number(text: str) -> bool:
    """Whether ``text`` holds a digit or a number, day or month word."""
    words = _WORD.findall(text.lower())
    return any(w.isdigit() or w[0].isdigit() or w in _NUMBER_WORDS for w in words)


@dataclass(frozen=True)
class Vocabulary:
    """The words of a whole index: how many of its ``units`` hold each word stem.

    A near-topic question the recordings cannot answer often names something they
    never mention ("London newspaper", "hotel parking", "warranty period"): its hits
    are about the topic, but its distinctive words are nowhere in the index.
    :meth:`absent` measures that, on the tokens the lexical index keeps
    (:func:`~llama_index_video.store.tokens.words`, any script), stemmed like
    :func:`content_words`.
    """

    stems: Mapping[str, int]
    units: int

    @classmethod
    def of(cls, frequencies: Mapping[str, int], units: int) -> Vocabulary:
        """From each token's document frequency over ``units`` units (the lexical
        index's, :attr:`~llama_index_video.store.bm25.LexicalSnapshot.frequencies`)."""
        stems: dict[str, int] = {}
        for token, count in frequencies.items():
            stem = word_stem(token)
            stems[stem] = max(stems.get(stem, 0), count)
        return cls(stems, units)

    def asked(self, question: str) -> dict[str, float]:
        """The stems of the question's content words, each weighted by its rarity in the
        index (``log((units + 1) / (found_in + 0.5))``). Only the words the index can hold
        count: never its stop words (:func:`~llama_index_video.store.tokens.scored_words`:
        "video", "talk", "won")."""
        scored = tokens.scored_words(tokens.words(question))
        stems = dict.fromkeys(word_stem(t) for t in scored if t not in STOPWORDS)
        return {s: math.log((self.units + 1) / (self.stems.get(s, 0) + 0.5)) for s in stems}

    def absent(self, question: str) -> float:
        """Share of the question's content words, weighted by rarity in the index
        (:meth:`asked`), that no unit holds; 0.0 for a question with no content words
        or an empty index."""
        weight = self.asked(question)
        if not weight or not self.units:
            return 0.0
        return sum(v for s, v in weight.items() if not self.stems.get(s)) / sum(weight.values())


def word_stem(token: str) -> str:
    """A token's first letters, a plural's "s" dropped first ("holes" ~ "hole")."""
    return (token[:-1] if len(token) > 3 and token.endswith("s") else token)[:STEM_LENGTH]


_VOCABULARIES: weakref.WeakKeyDictionary[LexicalSnapshot, Vocabulary] = weakref.WeakKeyDictionary()


def index_vocabulary(snapshot: LexicalSnapshot) -> Vocabulary:
    """The :class:`Vocabulary` of one generation of the lexical index, made once (a
    pass over its words) and kept as long as that generation is (no older one is held
    on to)."""
    made = _VOCABULARIES.get(snapshot)
    if made is None:
        made = _VOCABULARIES[snapshot] = Vocabulary.of(snapshot.frequencies, len(snapshot.ids))
    return made


def hit_features(
    question: str,
    hits: Sequence[SearchHit],
    fused: Sequence[float | None],
    *,
    absent: float = 0.0,
) -> list[tuple[float, ...]]:
    """The :data:`FEATURES` of each hit of one query, in order.

    ``fused``: each hit's fused score (its weighted cosine plus what the lexical channel
    added, :mod:`.fusion`); ``lexical`` is what it adds above the cosine. ``own_coverage``
    is :func:`coverage` of the hit's own text with the words weighted across all hits,
    ``similarity`` and ``coverage`` those of the best :data:`DEPTH` hits (the query's),
    ``gap`` the hit's cosine minus the best cosine of the other hits (0 for a lone hit:
    what else fell under the threshold is unknown), ``asked_for`` +1
    when the question asks for a number and the hit holds one, -1 when it holds none, 0
    when the question asks for none; ``absent`` is the query's :meth:`Vocabulary.absent`
    (0.0 without a lexical index: nothing known to be missing).
    """
    texts = [hit_text(hit) for hit in hits]
    cosines = [hit.score or 0.0 for hit in hits]
    query = Relevance.of(question, hits)
    weight, vocabularies = word_weights(question, texts)
    numeric, named = asks_for_number(question), asks_for_name(question)
    rows: list[tuple[float, ...]] = []
    for i, (text, cosine) in enumerate(zip(texts, cosines, strict=True)):
        own = _share(weight, vocabularies[i])
        others = max((c for j, c in enumerate(cosines) if j != i), default=cosine)
        lexical = max(0.0, (fused[i] or cosine) - cosine)
        asked = (1.0 if holds_number(text) else -1.0) if numeric else 0.0
        name = (1.0 if holds_name(text) else -1.0) if named else 0.0
        rows.append(
            (
                *(cosine, lexical, own, query.similarity, query.coverage, cosine - others),
                *(asked, name, absent),
            )
        )
    return rows


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """A logistic model of whether a hit answers: ``sigmoid(intercept + coefficients .
    features)`` over :data:`FEATURES`, fitted by ``benchmarks/relevance_fit.py``."""

    coefficients: tuple[float, ...]
    intercept: float

    def __post_init__(self) -> None:
        if len(self.coefficients) != len(FEATURES):
            raise ValueError(
                f"need {len(FEATURES)} coefficients ({', '.join(FEATURES)}), "
                f"got {len(self.coefficients)}"
            )

    def probability(self, features: Sequence[float]) -> float:
        z = self.intercept + sum(c * f for c, f in zip(self.coefficients, features, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def confidences(
        self,
        question: str,
        hits: Sequence[SearchHit],
        fused: Sequence[float | None],
        *,
        absent: float = 0.0,
    ) -> list[float]:
        """Each hit's probability of answering ``question`` (0-1), in order; ``absent``:
        see :func:`hit_features`."""
        rows = hit_features(question, hits, fused, absent=absent)
        return [self.probability(row) for row in rows]


@dataclass(frozen=True, kw_only=True)
class ConfidenceGate:
    """Accepts a query's hits when the best hit's confidence reaches ``cut``.

    Attributes:
        calibration: The model of each hit's confidence.
        cut: The least best confidence a search answers from.
        sure: Under this best confidence the gate is sure nothing answers (``sure <=
            cut``): the bar of ``ask`` with a model, which decides the rest.
    """

    calibration: Calibration
    cut: float
    sure: float

    needs_recording = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.sure <= self.cut <= 1.0:
            raise ValueError(f"need 0 <= sure <= cut <= 1, got sure={self.sure}, cut={self.cut}")

    def abstains(self, recording: Sequence[float]) -> bool:
        return False

    def accepts_confidences(self, confidences: Sequence[float], *, lenient: bool = False) -> bool:
        """Whether a query whose hits have ``confidences`` is answered from them;
        ``lenient``: unless the gate is sure nothing answers (``sure``)."""
        return max(confidences, default=0.0) >= (self.sure if lenient else self.cut)

    def accepts(
        self,
        question: str,
        hits: Sequence[SearchHit],
        *,
        recording: Sequence[float] = (),
        lenient: bool = False,
    ) -> bool:
        """Whether ``hits`` (their confidences set, else computed from their cosines
        alone) are relevant enough to answer ``question`` from."""
        if not hits:
            return False
        confidences = [hit.confidence for hit in hits if hit.confidence is not None]
        if len(confidences) < len(hits):
            confidences = self.calibration.confidences(question, hits, [None] * len(hits))
        return self.accepts_confidences(confidences, lenient=lenient)


Gate: TypeAlias = RelevanceGate | ConfidenceGate
"""Either gate: both answer ``accepts(question, hits, recording=...)``."""
