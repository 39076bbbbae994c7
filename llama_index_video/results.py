"""What searching and answering return: hits, their context, citations, answers; and a
recording's chapters.

Every result is a frozen dataclass with ``to_dict()`` (the ``search --json`` and
``ask --json`` contracts). One search hit, best first in a list::

    {"source": "/home/me/talks/ozone.mp4", "modality": "transcript", "start": 36.0, "end": 45.2,
     "score": 0.71, "text": "...", "label": "[ozone.mp4 00:36-00:45]",
     "url": "/home/me/talks/ozone.mp4#t=36.0",
     "frame_path": "/home/me/video_index/media/frames/ab12_000036000.jpg",
     "frame_time": 36.0, "context": [{"start": 30.1, "end": 35.9, "text": "...",
     "label": "[ozone.mp4 00:30-00:35]", "modality": "transcript", "speaker": null}],
     "speaker": null, "site_url": null, "source_path": "/home/me/talks/ozone.mp4",
     "confidence": 0.83}

``source`` is the recording's file as an absolute path, where it is now (the index
follows a file moved or copied since ingest, and a download follows the index folder),
so it resolves from any working directory, whatever path was typed at ingest; the
tools that take a recording (``clip``, ``transcript``, the agents' and MCP tools) take
it as it is. ``source_path`` is the same path (kept for programs written when
``source`` was the path as typed), ``url`` that path with the moment (``#t=``), and
``frame_path`` is absolute too, wherever the index folder now is. Only a hit of nodes
no index manifest knows (a LlamaIndex retriever over other stores) keeps the stored
path, made absolute when it exists from the working directory.

``start``/``end``/``url`` are null for text documents; ``frame_path``/``frame_time``
are null when no frame is attached; ``context`` lists the units shown with the hit.
An ``ocr`` hit is text that stayed on screen from ``start`` to ``end``: ``text`` is
the recognised text and ``frame_path``/``frame_time`` the frame it was read from.
``speaker`` (``"SPEAKER_1"``...) says who spoke, on transcript hits and context of
files ingested with speaker labels. ``site_url`` links the same moment on the website a
recording was downloaded from (``https://youtu.be/ID?t=94``); null for local files.
``score`` is the hit's cosine similarity to the query in the space that found it
(see :mod:`llama_index_video.search.searcher`). ``confidence`` is the probability
(0-1) that the hit answers the query, calibrated on question sets it was not fitted to
(:mod:`llama_index_video.search.relevance`); null when the embedding model has no
calibration.

A :class:`Citation` is built one way, :meth:`Citation.at` (which
:meth:`Citation.from_node` and :attr:`SearchHit.citation` go through), so the labels a
model is shown and the moments its answer is checked against cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from llama_index_video import schema

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode


@dataclass(frozen=True)
class Citation:
    """A retrieved moment an answer may cite.

    Attributes:
        source: Path of the media or document: absolute, where it is now, when the
            index knows it (see the module docstring).
        file_name: File name shown in the label.
        start: Start in seconds on the source's timeline (None for untimed documents).
        end: End in seconds (None for a single instant or an untimed document).
        label: The label the model is shown, ``[file mm:ss-mm:ss]``.
        url: Where a click lands: ``source_path#t=start`` (``source`` when the absolute
            path is unknown; no ``#t=`` for documents).
        frame_path: The frame image of a frame moment, else None.
        modality: ``transcript``, ``frame``, ``ocr``, ``text``, ``video`` or ``audio``.
        speaker: Who spoke (``SPEAKER_1``...) in a transcript moment with speaker labels.
        site_url: The moment on the website the recording came from, if downloaded.
        source_path: The file as an absolute path, when known.
    """

    source: str
    file_name: str
    start: float | None
    end: float | None
    label: str
    url: str
    frame_path: str | None
    modality: str
    speaker: str | None = None
    site_url: str | None = None
    source_path: str | None = None

    @classmethod
    def at(
        cls,
        source: str,
        start: float | None,
        end: float | None = None,
        *,
        modality: str,
        file_name: str | None = None,
        label: str | None = None,
        url: str | None = None,
        frame_path: str | None = None,
        speaker: str | None = None,
        site_url: str | None = None,
        source_path: str | None = None,
    ) -> Citation:
        """The citation of a moment of ``source``; what is not given is derived.

        The file name comes from ``source``, the label from
        :func:`~llama_index_video.schema.moment_label` and the link from
        :func:`~llama_index_video.schema.media_fragment_url` of ``source_path`` (else
        ``source``).
        """
        name = file_name or PurePath(source).name
        link = source_path or source
        return cls(
            source=source,
            file_name=name,
            start=start,
            end=end,
            label=label or schema.moment_label(name, start, end),
            url=url or (link if start is None else schema.media_fragment_url(link, start)),
            frame_path=frame_path,
            modality=modality,
            speaker=speaker,
            site_url=site_url,
            source_path=source_path,
        )

    @classmethod
    def from_node(cls, node: BaseNode, *, source: str | None = None) -> Citation:
        """The citation of a retrieved node, from the metadata stored at ingest.

        Args:
            node: A node of this package (or any node: missing keys are derived, a
                frame's time from ``frame_time`` and its path from ``image_path``).
            source: Where the file is now, if it moved since it was indexed; the
                stored link then no longer applies and is derived again.
        """
        meta = node.metadata
        stored = str(
            meta.get(schema.SOURCE) or meta.get(schema.FILE_NAME) or node.ref_doc_id or node.node_id
        )
        start = _seconds(meta.get(schema.START_S))
        if start is None:
            start = _seconds(meta.get(schema.FRAME_TIME))
        frame_path = meta.get(schema.IMAGE_PATH) or getattr(node, "image_path", None)
        moved = source is not None and source != stored
        return cls.at(
            source if source is not None else stored,
            start,
            _seconds(meta.get(schema.END_S)),
            modality=str(meta.get(schema.MODALITY) or ("frame" if frame_path else "text")),
            file_name=_text(meta.get(schema.FILE_NAME)),
            label=_text(meta.get(schema.LABEL)),
            url=None if moved else _text(meta.get(schema.MEDIA_URL)),
            frame_path=str(frame_path) if frame_path else None,
            speaker=_text(meta.get(schema.SPEAKER)),
            site_url=_text(meta.get(schema.SITE_URL)),
        )

    def to_dict(self, *, compact: bool = False) -> dict[str, Any]:
        """The ``ask --json`` citation object; ``compact``: as agents read it (see
        :meth:`SearchHit.to_dict`)."""
        data = {
            "source": self.source,
            "start": self.start,
            "end": self.end,
            "label": self.label,
            "url": self.url,
            "frame_path": self.frame_path,
            "modality": self.modality,
            "speaker": self.speaker,
            "site_url": self.site_url,
            "source_path": self.source_path,
        }
        return compacted(data) if compact else data


@dataclass(frozen=True)
class Chapter:
    """One topical section of a recording, on the source's own timeline."""

    source: str
    start: float
    end: float
    title: str
    label: str  # "[meeting.mp4 04:10-09:55]"
    text: str  # the title and the chapter's most central units
    node_id: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``chapters --json`` prints."""
        return {
            "source": self.source,
            "start": self.start,
            "end": self.end,
            "title": self.title,
            "label": self.label,
            "text": self.text,
        }

    @classmethod
    def from_node(cls, node: BaseNode) -> Chapter:
        metadata = node.metadata
        return cls(
            source=str(metadata.get(schema.SOURCE, "")),
            start=float(metadata[schema.START_S]),
            end=float(metadata[schema.END_S]),
            title=str(metadata.get(schema.TITLE, "")),
            label=str(metadata.get(schema.LABEL, "")),
            text=node.get_content(),
            node_id=node.node_id,
        )


@dataclass(frozen=True)
class ContextSpan:
    """A unit shown with a hit: a neighbouring stretch of speech, or text on screen."""

    start: float
    end: float
    text: str
    label: str = ""
    modality: str = "transcript"
    speaker: str | None = None


@dataclass(frozen=True)
class SearchHit:
    """One ranked moment (see the module docstring for the JSON shape)."""

    source: str
    modality: str
    start: float | None
    end: float | None
    score: float | None
    text: str | None
    label: str
    url: str | None
    frame_path: str | None
    frame_time: float | None
    context: list[ContextSpan] = field(default_factory=list)
    speaker: str | None = None
    site_url: str | None = None
    source_path: str | None = None
    confidence: float | None = None
    chapter: str | None = None  # the title of the chapter a transcript hit belongs to

    @property
    def citation(self) -> Citation:
        """The citation of the hit itself."""
        return Citation.at(
            self.source,
            self.start,
            self.end,
            modality=self.modality,
            label=self.label,
            url=self.url,
            frame_path=self.frame_path,
            speaker=self.speaker,
            site_url=self.site_url,
            source_path=self.source_path,
        )

    def citations(self) -> list[Citation]:
        """Every moment this hit shows: the hit, then each unit of its context."""
        return [
            self.citation,
            *(
                Citation.at(
                    self.source,
                    unit.start,
                    unit.end,
                    modality=unit.modality,
                    label=unit.label,
                    speaker=unit.speaker,
                    source_path=self.source_path,
                )
                for unit in self.context
            ),
        ]

    def to_dict(self, *, compact: bool = False) -> dict[str, Any]:
        """The hit's JSON, the one wire form of a hit (the module docstring's shape):
        ``search --json``, the service (which adds URLs), the agent tools and MCP.

        ``compact`` is the same object as agents read it, within their byte budget: the
        same keys and meanings, with nulls left out, times to 0.1 s, the score and the
        confidence to three places, no ``source_path`` (``url`` holds it), and each
        context unit as its ``label``, ``speaker`` and ``text`` (the label holds its times).
        """
        data = asdict(self)
        if not compact:
            return data
        data["context"] = [
            compacted({"label": unit.label or None, "speaker": unit.speaker, "text": unit.text})
            for unit in self.context
        ] or None
        return compacted(data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchHit:
        """The hit whose :meth:`to_dict` (not compact) is ``data``; other keys (the
        service's media links) are left out.

        Raises:
            TypeError: a key of the hit is missing, or its context is malformed.
        """
        known = {f.name for f in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["context"] = [ContextSpan(**unit) for unit in data.get("context") or []]
        return cls(**values)


def compacted(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as agents read it: nulls and ``source_path`` left out, times (``start``,
    ``end``, ``frame_time``) to 0.1 s, ``score`` and ``confidence`` to three places."""
    kept: dict[str, Any] = {}
    for key, value in data.items():
        if value is None or key == "source_path":
            continue
        if key in _TIMES:
            value = round(float(value), 1)
        elif key in ("score", "confidence"):
            value = round(float(value), 3)
        kept[key] = value
    return kept


_TIMES = frozenset({"start", "end", "frame_time", "duration"})


@dataclass(frozen=True)
class Answer:
    """An answer with its citations (as data) and the hits it was built from."""

    question: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    found: bool = True
    model: str | None = None
    unverified: list[str] = field(default_factory=list)
    reason: str | None = None
    """Why nothing was found (``found`` false): the gate's or the model's reason."""
    reason_code: str | None = None
    """``reason`` as a code in no language: ``nothing_relevant``, ``model_not_found`` or
    ``no_answer`` (:mod:`llama_index_video.answering.not_found`)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``ask --json`` object: the answer, whether anything was found (and why
        not), the citations, the labels cited but not retrieved, and the hits."""
        return {
            "question": self.question,
            "answer": self.text,
            "found": self.found,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "model": self.model,
            "citations": [c.to_dict() for c in self.citations],
            "unverified_citations": list(self.unverified),
            "hits": [h.to_dict() for h in self.hits],
        }


def _seconds(value: Any) -> float | None:
    return None if value is None or value == "" else float(value)


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)
