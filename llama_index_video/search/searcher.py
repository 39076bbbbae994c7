"""Search: retrieve, post-process and score moments, as :class:`SearchHit` results.

:class:`VideoSearcher` is what ``VideoIndex.search`` and ``search --json`` run, and
what :class:`~llama_index_video.answering.answerer.VideoAnswerer` calls before it
answers. The result types live in :mod:`llama_index_video.results`.

Within one embedding model, channels (transcript, OCR text, frames by their text) are
blended by weighted cosine similarity; hits of different models (frames by their
pixels) are fused by weighted reciprocal rank (:mod:`llama_index_video.search.fusion`).
A hit's ``score`` is its cosine similarity to the query in the space that found it
(text embeddings, or text-to-image for a frame found by its pixels): the number the
relevance threshold was applied to. Similarities of different spaces are not
comparable, so ``score`` need not decrease down the list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from llama_index_video import results, schema
from llama_index_video.search.fusion import Retriever, similarities
from llama_index_video.search.relevance import Calibration, ConfidenceGate, Gate, Vocabulary
from llama_index_video.search.seek import seek
from llama_index_video.speakers.base import unknown_speakers
from llama_index_video.transcription.language import unknown_languages

if TYPE_CHECKING:
    from llama_index_video.store.library import LibraryEntry
    from llama_index_video.store.manifest import Manifest


class Location(NamedTuple):
    """Where an indexed file is now."""

    source: str
    """The path as it was given to ``ingest`` (relative to that working directory)."""
    path: str | None
    """The same file as an absolute path; None when unknown."""


def located(manifest: Manifest, content_hash: str, stored_source: str) -> Location:
    """Where an indexed content is now, as ``manifest`` knows it: the path as it was given
    (its stored one if still there, else a live one) and that file's absolute path,
    which resolves from any working directory (the last known one if no path of the
    content is left)."""
    records = [(r, manifest.located(r)) for r in manifest.paths_of(content_hash)]
    for record, path in records:
        if record.source == stored_source and Path(path).exists():
            return Location(stored_source, path)
    for record, path in records:
        if Path(path).exists():
            return Location(record.source, path)
    known = next((path for r, path in records if r.source == stored_source), None)
    return Location(stored_source, known)


Locate = Callable[[str, str], "str | Location"]
"""Maps ``(content_hash, stored source)`` to where the file is now: a
:class:`Location`, or just the path as given."""

Recording = Callable[[Any, Any], Sequence[float]]
"""Maps a query (with the embedding retrieval left in it, if any) and its best moment to
the cosine similarities of the query's candidates from that moment's recording
(``VideoIndex.recording_scores``): what a ``standout`` gate measures."""


class Postprocessor(Protocol):
    """Turns retrieved hits into others (any LlamaIndex node postprocessor is one)."""

    def postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]: ...


@dataclass(frozen=True)
class Finding:
    """A post-processed retrieved node and the search hit made of it."""

    node: Any
    hit: results.SearchHit


class VideoSearcher:
    """Finds the moments for a query: retrieval, postprocessors, then hits.

    Args:
        retriever: Any LlamaIndex retriever over this package's nodes (the fused
            retriever of ``VideoIndex.as_retriever`` reports cosine similarities).
        postprocessors: Applied in order after retrieval, e.g. a reranker and then
            ``TimestampFramePostprocessor``.
        locate: Maps ``(content_hash, stored source)`` to where the file is now
            (``VideoIndex.where``).
        relevance: Rejects a query whose best hits do not look like they answer it
            (:mod:`llama_index_video.search.relevance`); None keeps every hit that
            passed the retriever's threshold.
        recording: The query's candidates in its best recording, for a gate on
            ``standout`` (required by one).
        calibration: Gives each hit its ``confidence``; None: that of a
            :class:`~.relevance.ConfidenceGate` given as ``relevance``, else no
            confidence.
        vocabulary: The words of the whole index now (``SearchPolicy.vocabulary``),
            for the confidence's ``absent``; None: nothing is known to be absent.
        query: Makes of a question the query the retriever takes: LlamaIndex's
            ``QueryBundle`` (None), or :class:`~llama_index_video.stored.Query` for
            retrievers over plain rows (``SearchPolicy.wiring`` says which).
    """

    def __init__(
        self,
        *,
        retriever: Retriever,
        postprocessors: Sequence[Postprocessor] = (),
        locate: Locate | None = None,
        relevance: Gate | None = None,
        recording: Recording | None = None,
        calibration: Calibration | None = None,
        vocabulary: Callable[[], Vocabulary | None] | None = None,
        query: Callable[[str], Any] | None = None,
    ) -> None:
        if relevance is not None and relevance.needs_recording and recording is None:
            raise ValueError(
                f"{relevance} needs the recording's candidates: pass recording= "
                "(VideoIndex.recording_scores)"
            )
        self.retriever = retriever
        self.postprocessors = list(postprocessors)
        self.locate = locate
        self.relevance = relevance
        self.recording = recording
        if calibration is None and isinstance(relevance, ConfidenceGate):
            calibration = relevance.calibration
        self.calibration = calibration
        self.vocabulary = vocabulary
        if query is None:
            from llama_index.core.schema import QueryBundle

            query = QueryBundle
        self.query = query

    def search(self, query: str) -> list[results.SearchHit]:
        """The best moments for ``query`` (the ``search --json`` contract)."""
        return [finding.hit for finding in self.findings(query)]

    def retrieve(self, query: str) -> list[Any]:
        """The post-processed nodes for ``query``, most relevant first."""
        return [finding.node for finding in self.findings(query)]

    def findings(self, query: str, *, lenient: bool = False) -> list[Finding]:
        """The post-processed nodes and their hits, scored by cosine similarity and,
        with a calibration, by ``confidence``.

        Empty when nothing passed the retriever's threshold or the relevance gate;
        ``lenient``: a confidence gate turns the query away only when it is sure nothing
        answers (``ConfidenceGate.sure``), as for a model that judges the hits itself.
        """
        bundle = self.query(query)
        nodes = list(self.retriever.retrieve(bundle))
        cosine = similarities(nodes)  # postprocessors build new NodeWithScores
        for postprocessor in self.postprocessors:
            nodes = postprocessor.postprocess_nodes(nodes, query_bundle=bundle)
        hits = [
            hit_from_node(n, locate=self.locate, similarity=cosine.get(n.node.node_id), query=query)
            for n in nodes
        ]
        if self.calibration is not None and hits:
            words = self.vocabulary() if self.vocabulary is not None else None
            absent = words.absent(query) if words is not None else 0.0
            fused = [n.score for n in nodes]
            confidences = self.calibration.confidences(query, hits, fused, absent=absent)
            hits = [
                replace(hit, confidence=round(c, 4))
                for hit, c in zip(hits, confidences, strict=True)
            ]
        found = [Finding(n, hit) for n, hit in zip(nodes, hits, strict=True)]
        if not self.accepts(bundle, found, lenient=lenient):
            return []
        return found

    def accepts(self, bundle: Any, found: Sequence[Finding], *, lenient: bool = False) -> bool:
        """Whether the relevance gate lets ``found`` answer the query (True without one;
        ``lenient``: see :meth:`findings`)."""
        if self.relevance is None:
            return True
        if isinstance(self.relevance, ConfidenceGate):
            hits = [finding.hit for finding in found]
            return self.relevance.accepts(bundle.query_str, hits, lenient=lenient)
        recording: Sequence[float] = ()
        if found and self.relevance.needs_recording and self.recording is not None:
            recording = self.recording(bundle, found[0].node)
        hits = [finding.hit for finding in found]
        return self.relevance.accepts(bundle.query_str, hits, recording=recording)


def hit_from_node(
    hit: Any,
    *,
    locate: Locate | None = None,
    similarity: float | None = None,
    query: str | None = None,
) -> results.SearchHit:
    """Turn a retrieved (and post-processed) node into a :class:`SearchHit`.

    Args:
        hit: The node and its score.
        locate: Maps ``(content_hash, stored_source)`` to where the file is now; a
            :class:`Location` gives its absolute path, the hit's ``source`` and
            ``source_path`` (without one, the stored path made absolute if it exists
            from the working directory, else the stored path as it is).
        similarity: The hit's cosine similarity, reported as ``score``; ``None``: the
            node's own score.
        query: The search query: a unit of several sentences then starts (with its
            label and link) where the sentence that best matches it begins
            (:mod:`~llama_index_video.search.seek`).
    """
    node = hit.node
    metadata = node.metadata
    stored = metadata.get(schema.SOURCE)
    key = metadata.get(schema.CONTENT_HASH)
    located = locate(str(key), str(stored)) if locate and key and stored else None
    moved, source_path = located if isinstance(located, Location) else (located, None)
    given = moved or stored
    if source_path is None and given and Path(given).exists():
        source_path = str(Path(given).absolute())
    # Named by where the file is (the path typed at ingest resolves only where it ran).
    citation = results.Citation.from_node(node, source=source_path or moved)
    source = citation.source
    modality = str(metadata.get(schema.MODALITY, "text"))
    start = _float(metadata.get(schema.START_S))
    shows_frame = modality in ("frame", "ocr")
    frame_path = _str(metadata.get(schema.IMAGE_PATH)) if shows_frame else None
    frame_time = _float(metadata.get(schema.FRAME_TIME)) if shows_frame else None
    score = hit.score if similarity is None else similarity
    context: list[results.ContextSpan] = []
    text: str | None = node.get_content() or None
    if isinstance(getattr(node, "hit_ids", None), list):  # a moment with its context attached
        if node.image_path or not shows_frame:  # an ocr hit keeps its own frame otherwise
            frame_path = node.image_path
            frame_time = node.frame_time
        context = [
            results.ContextSpan(
                round(c.start, 3), round(c.end, 3), c.text, c.label, c.modality, c.speaker
            )
            for c in node.context
        ]
        text = node.hit_text or None
    url = citation.url if start is not None else None
    label = citation.label
    sought = seek(query, text or "", metadata, source=source) if query else None
    if sought is not None:
        start, label, url = sought
    return results.SearchHit(
        source=source,
        source_path=source_path,
        modality=modality,
        start=start,
        end=_float(metadata.get(schema.END_S)),
        score=None if score is None else round(score, 4),
        text=text,
        label=label,
        url=url,
        frame_path=frame_path,
        frame_time=frame_time,
        context=context,
        speaker=citation.speaker,
        site_url=citation.site_url,
        chapter=_str(metadata.get(schema.TITLE)) if modality == "transcript" else None,
    )


def filters_unmet(
    entries: Iterable[LibraryEntry],
    *,
    speakers: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> str | None:
    """Why a search filtered by ``speakers`` and ``languages`` (codes) may have found
    nothing, given the index's recordings (``entries``): ``"speaker: ..."`` or
    ``"language: ..."``, one line naming the speakers or languages the index has; None
    when it has every one asked for."""
    listed = list(entries)
    known = [who for entry in listed for who in entry.speakers]
    if speakers and (note := unknown_speakers(speakers, known)):
        return f"speaker: {note}"
    spoken = [entry.language for entry in listed if entry.language]
    if languages and (note := unknown_languages(languages, spoken)):
        return f"language: {note}"
    return None


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _str(value: object) -> str | None:
    return None if value is None else str(value)
