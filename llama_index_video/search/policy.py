"""How an index folder searches: the search policy, in one place.

"How does search rank?" is answered here, once for ``VideoIndex.search``,
``VideoIndex.answerer`` and ``VideoIndex.as_retriever``:

- **Channels and weights** (:data:`DEFAULT_WEIGHTS`): one channel per modality, plus
  frames by their pixels when the folder has visual search (:data:`VISUAL_CHANNEL`).
  A frame's text repeats what OCR and the transcript hold, so its own hits count half.
  The lexical channel (:data:`~.lexical.LEXICAL_CHANNEL`, the query's exact words)
  adds its weighted match to a moment's best weighted cosine; it has a least match of
  its own (:data:`~.lexical.LEXICAL_THRESHOLD`).
- **Thresholds** per embedding model (:data:`DEFAULT_THRESHOLDS`,
  :data:`DEFAULT_VISUAL_THRESHOLDS`): the least cosine similarity of a hit.
- **Confidence** per embedding model (:data:`DEFAULT_CALIBRATIONS`): each hit's
  probability of answering, and **gates** (:data:`DEFAULT_GATES`,
  :data:`STANDOUT_GATES`): when the best hits are relevant enough to answer from
  (:mod:`.relevance`).
- **Candidate counts** (:data:`CANDIDATES_PER_HIT`, :data:`MIN_CANDIDATES`): how many
  candidates the shared text query asks the store for.
- **The wiring** (:class:`SearchPolicy`): the fused retriever of those channels
  (:meth:`SearchPolicy.retriever`), the candidates of the best recording that a
  standout gate measures (:meth:`SearchPolicy.recording_scores`), and what a searcher
  is given besides its retriever (:meth:`SearchPolicy.wiring`: where files are now,
  the gate and the recording's candidates), the same for a search and an answer.

How the channels are combined is :mod:`.fusion`'s business, how one channel retrieves
:mod:`.retriever`'s, how a retrieved node becomes a hit :mod:`.searcher`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from llama_index_video import schema
from llama_index_video.embeddings.identity import (
    E5_EMBEDDING,
    SENTENCE_TRANSFORMERS,
    TRANSFORMERS_CLIP,
)
from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL
from llama_index_video.search.by_chapter import CANDIDATES, CHAPTERS, ChapterRetriever
from llama_index_video.search.fusion import Channel, FusionRetriever, QueryEmbedding, Retriever
from llama_index_video.search.lexical import (
    LEXICAL_CHANNEL,
    LEXICAL_THRESHOLD,
    LEXICAL_WEIGHT,
    LexicalRetriever,
)
from llama_index_video.search.relevance import (
    Calibration,
    ConfidenceGate,
    Gate,
    RelevanceGate,
    Vocabulary,
    index_vocabulary,
)
from llama_index_video.search.searcher import Locate, Postprocessor, Recording, VideoSearcher
from llama_index_video.search.speaker_named import SpeakerNamedRetriever
from llama_index_video.speakers.base import as_known
from llama_index_video.weights import CLIP_VIT_B32, E5_MULTILINGUAL

if TYPE_CHECKING:
    from llama_index.core.embeddings import MultiModalEmbedding
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.store.lexical import LexicalStore

CANDIDATES_PER_HIT = 10
MIN_CANDIDATES = 50
MINILM_IDENTITY = f"{SENTENCE_TRANSFORMERS}:{DEFAULT_LOCAL_MODEL}"
E5_IDENTITY = f"{E5_EMBEDDING}:{E5_MULTILINGUAL}@384"
"""What :func:`~llama_index_video.embeddings.identity.embedding_identity` names the
default multilingual model (384 dimensions)."""
# Minimum cosine similarity for a hit, per embedding model: a floor under which nothing
# is a candidate, low enough that the confidence (DEFAULT_CALIBRATIONS) decides. At
# 0.25 (benchmarks/evaluate.py's sweep, 2026-11-30) it emptied 0-9 % of the answerable
# questions of the sets before any gate ("What does the Y-axis of the whiteboard graph
# say?" found its moment at 0.245); at 0.15 none (benchmarks/relevance_fit.py,
# docs/evaluation.md, 2026-12-06).
DEFAULT_THRESHOLDS: dict[str, float] = {
    MINILM_IDENTITY: 0.15,
}
# Minimum text-to-image cosine similarity of a visual hit, per model. Not calibrated
# here (no weights offline): CLIP ViT-B/32 scores matching image-caption pairs around
# 0.25-0.35 and unrelated ones around 0.10-0.20. Calibrate with the evaluation
# benchmark on a machine that has the model.
DEFAULT_VISUAL_THRESHOLDS: dict[str, float] = {
    f"{TRANSFORMERS_CLIP}:{CLIP_VIT_B32}": 0.25,
}
# Each hit's confidence (the probability that it answers), per embedding model, and the
# gate on it that applies unless told otherwise: fitted by `benchmarks/relevance_fit.py`
# on every question set of the model, leave-one-set-out (docs/evaluation.md,
# "Leave-one-set-out: the claim"). all-MiniLM-L6-v2: the examples, two held-out
# narrations, real meeting excerpts, a phone call and a reader, 20 minutes of synthetic
# speech, seven whole QMSum meetings (real transcripts, synthetic timing; 355
# questions); multilingual-e5-small: the four short English sets and the multilingual
# recordings, synthetic and real (405 questions). The gate is conservative by
# construction (a wrong empty is worse than a weak hit): `cut` and `sure` each leave at
# most 1 % of each fit set's answerable questions empty (with under 100 a set: none),
# then are lowered by the most a set's lowest answerable question fell under the bar of
# a fit that did not see it.
DEFAULT_CALIBRATIONS: dict[str, Calibration] = {
    MINILM_IDENTITY: Calibration(
        coefficients=(5.2901, 1.8036, 1.9703, -0.5453, -0.3207, 2.6224, 0.2986, 0.2194, -0.2103),
        intercept=-3.4584,
    ),
    E5_IDENTITY: Calibration(
        coefficients=(22.2235, 1.5121, 1.6671, 0.7361, -1.0766, 17.2413, 0.1517, 0.1082, -0.0506),
        intercept=-20.7521,
    ),
}
# multilingual-e5-small has a confidence but no default gate: held out, its gate (cut
# 0.030-0.067) turned away at most 24 % of the near-topic questions and emptied 6 % of
# the answerable ones of the real multilingual recordings.
DEFAULT_GATES: dict[str, ConfidenceGate] = {
    MINILM_IDENTITY: ConfidenceGate(
        calibration=DEFAULT_CALIBRATIONS[MINILM_IDENTITY], cut=0.0588, sure=0.0588
    ),
}
# STANDOUT_GATES (`relevance="standout"`): how far the best candidate stands out in its
# recording plus coverage of the question's words, fitted on benchmarks/questions.json
# by `python benchmarks/rejection_signals.py` (2026-12-02); it abstains on recordings of
# one or two units.
STANDOUT_GATES: dict[str, RelevanceGate] = {
    MINILM_IDENTITY: RelevanceGate(signal="standout", weight=1.109, cut=1.778),
}
VISUAL_CHANNEL = "visual"
"""The fusion channel of frames found by their pixels (their modality stays ``frame``)."""
# Weight of each fusion channel: a modality, or "visual" (frames by their pixels).
# A frame's text repeats what OCR and the transcript hold, so its own hits count half.
DEFAULT_WEIGHTS: dict[str, float] = {
    "transcript": 1.0,
    "text": 1.0,
    "audio": 1.0,
    "video": 1.0,
    "ocr": 0.9,
    "frame": 0.5,
    "chapter": 1.0,
    VISUAL_CHANNEL: 0.5,
    LEXICAL_CHANNEL: LEXICAL_WEIGHT,
}


def weights_for(weights: Mapping[str, float] | None) -> dict[str, float]:
    """``DEFAULT_WEIGHTS`` overridden by ``weights``; ``ValueError`` for an unknown channel."""
    unknown = set(weights or {}) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ValueError(f"unknown weights {sorted(unknown)}; use {', '.join(DEFAULT_WEIGHTS)}")
    return {**DEFAULT_WEIGHTS, **(weights or {})}


def threshold_for(value: float | str | None, auto: float | None) -> float | None:
    """A threshold as given: ``"auto"`` is ``auto`` (the model's default, if any)."""
    if value == "auto":
        return auto
    if isinstance(value, str):
        raise ValueError(f"threshold must be a number, None or 'auto', got {value!r}")
    return value


def gate_for(value: Gate | str | None, identity: str) -> Gate | None:
    """A relevance gate as given: ``"auto"`` and ``"standout"`` name the calibrated gates
    of the embedding model ``identity``."""
    if value == "auto":
        return DEFAULT_GATES.get(identity)
    if value == "standout":
        if identity not in STANDOUT_GATES:
            raise ValueError(
                f"no standout gate is calibrated for {identity}: pass relevance="
                "RelevanceGate(signal='standout', ...) fitted with benchmarks/rejection_signals.py"
            )
        return STANDOUT_GATES[identity]
    if isinstance(value, str):
        raise ValueError(f"relevance must be a gate, None, 'auto' or 'standout', got {value!r}")
    return value


class Wiring(TypedDict):
    """What a :class:`~.searcher.VideoSearcher` (or an answerer's) is given besides
    its retriever and postprocessors."""

    locate: Locate
    relevance: Gate | None
    recording: Recording
    calibration: Calibration | None
    vocabulary: Callable[[], Vocabulary | None]
    query: Callable[[str], Any]


VectorChannel = Callable[..., Retriever]
"""Makes the vector channel's retriever of the text index, given ``top_k``,
``modalities``, ``threshold``, ``visible``, ``speakers``, ``contents``, ``languages`` and
``folder``
(:class:`~.retriever.VideoRetriever` over a LlamaIndex index, or
:class:`~.candidates.CollectionRetriever` over Chroma's engine)."""


@dataclass(frozen=True, kw_only=True)
class SearchPolicy:
    """The search of one index folder: its channels, thresholds and gate, wired.

    Attributes:
        vectors: Makes the vector channel of the text index (every modality's nodes).
        rows: Ids to the text index's nodes (those missing left out), for the lexical
            channel.
        query: Makes of a question the query ``vectors``' retrievers take (LlamaIndex's
            ``QueryBundle``, or :class:`~llama_index_video.stored.Query`).
        embed_model: The model its text channels embed queries with.
        visible: Given content hashes, those whose rows are complete (the manifest's).
        locate: Maps ``(content_hash, stored source)`` to where the file is now.
        folder: The index folder stored media paths are relative to.
        threshold: Least cosine similarity of a text hit; None: none.
        weights: Weight of each channel (see :func:`weights_for`).
        relevance: The gate; None: every hit above the threshold.
        calibration: Gives each hit its ``confidence``; None: no confidence (unless the
            gate is a ``ConfidenceGate``).
        visual_model: The model of frames by their pixels; None: no visual search.
        frame_store: Where frame vectors are (with ``visual_model``).
        visual_threshold: Least text-to-image cosine similarity of a visual hit.
        lexical: The folder's lexical index, for the lexical channel (the query's exact
            words, :mod:`.lexical`); None: no lexical channel.
        lexical_threshold: Least lexical match of a lexical hit.
        words: The folder's lexical index whether or not it searches: the words of the
            whole index, of which a question's may be absent (the confidence's
            ``absent``); None: nothing is known to be absent.
        version: The contents of the version read, while a writer of another process
            at work adds rows the loaded vector indexes do not know (a query filtered by
            their metadata would meet them: chromadb's ``Error finding id``): every
            vector query, of the text and of the frames, keeps to these. Asked with
            ``filtered=False`` for a query with no other filter, which meets only rows
            the loaded vector indexes know: None when those are the version's alone
            (a filter costs a large index's query some 5x). None: no need.
    """

    vectors: VectorChannel
    rows: Callable[[list[str]], Sequence[Any]]
    query: Callable[[str], Any]
    embed_model: QueryEmbedding
    visible: Callable[[Collection[str]], set[str]]
    locate: Locate
    folder: Path
    threshold: float | None = None
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    relevance: Gate | None = None
    calibration: Calibration | None = None
    visual_model: MultiModalEmbedding | None = None
    frame_store: BasePydanticVectorStore | None = None
    visual_threshold: float | None = None
    lexical: LexicalStore | None = None
    lexical_threshold: float | None = LEXICAL_THRESHOLD
    words: LexicalStore | None = None
    version: Callable[..., Collection[str] | None] = lambda **_filtered: None

    def retriever(
        self,
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        contents: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        by_chapter: bool = False,
    ) -> FusionRetriever | ChapterRetriever:
        """Fused retrieval over the modalities (every moment's by default, chapters only
        when named), thresholds applied; ``by_chapter``: each moment re-scored with its
        chapter's match (:mod:`.by_chapter`).

        Each modality is a channel (cosine similarity, the text threshold); frames are
        also ranked by their pixels when there is visual search and ``frame`` is among
        the modalities; the lexical channel adds each moment's match of the query's
        exact words. See :mod:`.fusion` for what the scores mean.

        The text channels share one vector query for ``CANDIDATES_PER_HIT * top_k``
        candidates, split by modality afterwards: a metadata-filtered query is about
        50x slower in Chroma on a large collection (an unfiltered top-50 takes ~9 ms on
        100 hours of transcript, a modality-filtered top-5 ~170 ms).

        ``speakers`` keeps only transcript units spoken by them, ``contents`` only the
        moments of these contents (content hashes; metadata filters), ``languages``
        only transcript units heard in them (Whisper codes; frames, on-screen text and
        documents carry no language, so they are left out).
        """
        if by_chapter:
            return ChapterRetriever(
                moments=self.retriever(
                    top_k=CANDIDATES * top_k,
                    modalities=modalities,
                    speakers=speakers,
                    contents=contents,
                    languages=languages,
                ),
                chapters=self.retriever(top_k=CHAPTERS, modalities=["chapter"], contents=contents),
                top_k=top_k,
                query=self.query,
            )
        chosen = list(modalities or schema.MOMENT_MODALITIES)
        if speakers or languages:  # only transcript units have them
            chosen = [m for m in chosen if m == "transcript"]
        shared = self.vectors(  # raises on an unknown modality
            top_k=max(MIN_CANDIDATES, CANDIDATES_PER_HIT * top_k),
            modalities=modalities,
            threshold=self.threshold,
            visible=self.visible,
            speakers=speakers,
            contents=self._kept(contents, filtered=bool(modalities or speakers or languages)),
            languages=languages,
            folder=self.folder,
        )
        channels = [
            Channel(m, shared, self.weights[m], self.embed_model, modality=m) for m in chosen
        ]
        if self.lexical is not None and self.weights[LEXICAL_CHANNEL] > 0:
            words = LexicalRetriever(
                self.lexical,
                self.rows,
                top_k=max(MIN_CANDIDATES, CANDIDATES_PER_HIT * top_k),
                modalities=chosen,
                speakers=speakers,
                languages=languages,
                contents=contents,
                threshold=self.lexical_threshold,
                visible=self.visible,
                folder=self.folder,
            )
            weight = self.weights[LEXICAL_CHANNEL]
            channels.append(Channel(LEXICAL_CHANNEL, words, weight, self.embed_model, adds=True))
        if self.visual_model is not None and self.frame_store is not None and "frame" in chosen:
            from llama_index.core import VectorStoreIndex

            from llama_index_video.search.retriever import VideoRetriever
            from llama_index_video.store.folder_index import embedding_only

            frames = VectorStoreIndex.from_vector_store(
                self.frame_store,
                embed_model=self.visual_model,
                transformations=embedding_only(self.visual_model),
            )
            retriever = VideoRetriever(
                frames,
                top_k=top_k,
                threshold=self.visual_threshold,
                visible=self.visible,
                contents=self._kept(contents, filtered=False),
                folder=self.folder,
            )
            weight = self.weights[VISUAL_CHANNEL]
            channels.append(Channel(VISUAL_CHANNEL, retriever, weight, self.visual_model))
        return FusionRetriever([c for c in channels if c.weight > 0], top_k=top_k, query=self.query)

    def moments(
        self,
        *,
        speakers: Sequence[str] | None,
        by_named_speaker: bool,
        known_speakers: Callable[[], Sequence[str]],
        **options: Any,
    ) -> Retriever:
        """:meth:`retriever`, ``speakers`` spelled as ``known_speakers()`` spells them
        (a name in any case); with ``by_named_speaker`` and no ``speakers``, one that
        keeps only what the speakers a question names (of ``known_speakers()``) said
        (:mod:`.speaker_named`: opt-in, as it found the answer less often on real
        meetings)."""
        if speakers:  # as the index spells them: a name in any case
            return self.retriever(speakers=as_known(speakers, known_speakers()), **options)
        if not by_named_speaker:
            return self.retriever(speakers=speakers, **options)
        return SpeakerNamedRetriever(
            lambda named: self.retriever(speakers=named, **options),
            known_speakers,
            query=self.query,
        )

    def searcher(self, retriever: Retriever, postprocessor: Postprocessor) -> VideoSearcher:
        """What a search runs: ``retriever``'s moments given their context by
        ``postprocessor``, scored, and passed through the gate."""
        return VideoSearcher(retriever=retriever, postprocessors=[postprocessor], **self.wiring())

    def recording_scores(self, query: Any, best: Any = None) -> list[float]:
        """Cosine similarities of ``query``'s best candidates in one recording.

        The recording is ``best``'s (search passes its best moment), else that of the
        best text node for ``query`` (no threshold); of that recording's nodes the best
        ``MIN_CANDIDATES`` are scored, best first. This is what a ``standout`` relevance
        gate measures. A bundle whose embedding retrieval already computed is not
        embedded again, so behind a search this costs one content-filtered vector query
        (slower in Chroma than an unfiltered one, but once per query).
        """
        bundle = self.query(query) if isinstance(query, str) else query
        if bundle.embedding is None:
            bundle.embedding = self.embed_model.get_query_embedding(bundle.query_str)
        if best is None:
            found = self.vectors(
                top_k=1, visible=self.visible, contents=self._kept(None, filtered=False)
            ).retrieve(bundle)
            if not found:
                return []
            best = found[0]
        content = str(best.node.metadata.get(schema.CONTENT_HASH, ""))
        kept = self._kept([content], filtered=True)
        own = self.vectors(top_k=MIN_CANDIDATES, visible=self.visible, contents=kept)
        own_hits = own.retrieve(bundle)
        return [hit.score for hit in own_hits if hit.score is not None]

    def _kept(self, contents: Sequence[str] | None, *, filtered: bool) -> Sequence[str] | None:
        """``contents`` (None: every one) kept to the version read (:attr:`version`), for
        a query ``filtered`` by other metadata or not (``contents`` filter it too)."""
        version = self.version(filtered=filtered or bool(contents))
        if version is None:
            return contents
        kept = set(version) if contents is None else set(contents) & set(version)
        return sorted(kept) or [""]  # "" is no content's hash: none asked for is in it

    def vocabulary(self) -> Vocabulary | None:
        """The words of the whole index now (:attr:`words`' newest matrices); None
        without a lexical index."""
        snapshot = self.words.snapshot() if self.words is not None else None
        return index_vocabulary(snapshot) if snapshot is not None else None

    def wiring(self) -> Wiring:
        """Where files are now, the gate, the best recording's candidates and the
        index's words: what a searcher gets besides its retriever, for a search and an
        answer alike."""
        return Wiring(
            locate=self.locate,
            relevance=self.relevance,
            recording=self.recording_scores,
            calibration=self.calibration,
            vocabulary=self.vocabulary,
            query=self.query,
        )
