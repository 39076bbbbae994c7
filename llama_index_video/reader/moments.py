"""Building nodes for moments: transcript units, frames, on-screen text and text chunks.

Metadata stays flat and carries everything needed to cite and play a moment
(source, times, label, ``#t=`` link); the keys that only locate the moment are
excluded from what the embedding model and the LLM see.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index.core.schema import (
    BaseNode,
    NodeRelationship,
    ObjectType,
    RelatedNodeInfo,
    TextNode,
)

from llama_index_video import schema
from llama_index_video.ocr.spans import ScreenTextSpan
from llama_index_video.reader.ids import NodeIds, document_id, millis, stable_id
from llama_index_video.reader.moment_links import closest, shows_text
from llama_index_video.reader.nodes import FrameNode
from llama_index_video.reader.units import TranscriptUnit
from llama_index_video.sources.origin import Origin, moment_url

if TYPE_CHECKING:
    from llama_index_video.media.frames import Frame


@dataclass(frozen=True)
class SourceFile:
    """The file every node of one read refers to."""

    path: Path
    content_hash: str
    origin: Origin | None = None  # where a downloaded file came from

    @property
    def doc_id(self) -> str:
        return document_id(self.content_hash)

    def base_metadata(self, modality: str) -> dict[str, str | int | float]:
        return {
            schema.SOURCE: str(self.path),
            schema.FILE_NAME: self.path.name,
            schema.CONTENT_HASH: self.content_hash,
            schema.MODALITY: modality,
            **({schema.ORIGIN_URL: self.origin.url} if self.origin else {}),
        }

    def timed_metadata(
        self, modality: str, start: float, end: float
    ) -> dict[str, str | int | float]:
        metadata = self.base_metadata(modality)
        metadata.update(
            {
                schema.START_S: round(start, 3),
                schema.END_S: round(end, 3),
                schema.TIME_LABEL: schema.format_timestamp(start),
                schema.LABEL: schema.moment_label(self.path.name, start, end),
                schema.MEDIA_URL: schema.media_fragment_url(str(self.path), start),
            }
        )
        if self.origin:
            metadata[schema.SITE_URL] = moment_url(self.origin, start)
        return metadata


def transcript_nodes(
    source: SourceFile, units: Sequence[TranscriptUnit], *, language: str | None, note: str | None
) -> list[TextNode]:
    """One ``TextNode`` per unit, linked PREVIOUS/NEXT and to the source document.

    A unit's language is the one it was heard in, else ``language`` (the file's).
    """
    nodes = []
    node_id = NodeIds(source.content_hash)
    for unit in units:
        metadata = source.timed_metadata("transcript", unit.start, unit.end)
        heard_in = unit.language or language
        if heard_in:
            metadata[schema.LANGUAGE] = heard_in
        if unit.speaker:
            metadata[schema.SPEAKER] = unit.speaker
        if len(unit.sentences) > 1:
            metadata[schema.SENTENCES] = schema.format_sentences(unit.sentences)
        if note:
            metadata[schema.NOTE] = note
        node = TextNode(
            id_=node_id("transcript", millis(unit.start), millis(unit.end)),
            text=unit.text,
            metadata=metadata,
        )
        _exclude_locators(node)
        _link_source(node, source)
        nodes.append(node)
    for previous, following in itertools.pairwise(nodes):
        previous.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id=following.node_id)
        following.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(
            node_id=previous.node_id
        )
    return nodes


def frame_node(
    source: SourceFile, frame: Frame, *, spoken: str, screen_text: str = "", note: str | None
) -> FrameNode:
    """A ``FrameNode`` for a kept frame; its text is what is on screen and what is said.

    The text lets a text-only embedding model place the frame; a multimodal model
    embeds the pixels instead (see :class:`~llama_index_video.reader.nodes.MediaText`).
    """
    metadata = source.timed_metadata("frame", frame.time, frame.end)
    metadata[schema.FRAME_TIME] = frame.time
    metadata[schema.IMAGE_PATH] = str(frame.path)
    metadata[schema.MEDIA_URL] = schema.media_fragment_url(str(source.path), frame.time)
    if note:
        metadata[schema.NOTE] = note
    parts = [
        f"On screen: {screen_text}" if screen_text else "",
        f"Said: {spoken}" if spoken else "",
    ]
    text = (
        "\n".join(p for p in parts if p) or f"Video frame at {schema.format_timestamp(frame.time)}"
    )
    node = FrameNode(
        id_=stable_id(source.content_hash, "frame", millis(frame.time)),
        text=text,
        image_path=str(frame.path),
        image_mimetype="image/jpeg",
        metadata=metadata,  # type: ignore[call-arg]  # mypy sees only the alias "extra_info"
    )
    _exclude_locators(node)
    _link_source(node, source)
    return node


def ocr_nodes(
    source: SourceFile, spans: Iterable[ScreenTextSpan], *, max_chars: int, note: str | None
) -> list[TextNode]:
    """``ocr`` ``TextNode``s: text that stayed on screen, timed by how long it stayed.

    A long text is split at line breaks into nodes of at most ``max_chars`` characters
    sharing the span. Each node names the frame the text was read from.
    """
    nodes = []
    node_id = NodeIds(source.content_hash)
    for span in spans:
        for part, text in enumerate(_chunk_lines(span.lines, max_chars)):
            metadata = source.timed_metadata("ocr", span.start, span.end)
            metadata[schema.FRAME_TIME] = span.frame_time
            metadata[schema.IMAGE_PATH] = str(span.frame_path)
            if note:
                metadata[schema.NOTE] = note
            node = TextNode(
                id_=node_id("ocr", millis(span.start), part),
                text=text,
                metadata=metadata,
            )
            _exclude_locators(node)
            _link_source(node, source)
            nodes.append(node)
    return nodes


def text_chunk_nodes(source: SourceFile, chunks: Sequence[BaseNode]) -> list[TextNode]:
    """Re-key the chunks of a text document: deterministic ids, flat metadata, untimed."""
    nodes = []
    for index, chunk in enumerate(chunks):
        metadata = source.base_metadata("text")
        metadata[schema.LABEL] = schema.moment_label(source.path.name, None, None)
        node = TextNode(
            id_=stable_id(source.content_hash, "text", index),
            text=chunk.get_content(),
            metadata=metadata,
        )
        _exclude_locators(node)
        _link_source(node, source)
        nodes.append(node)
    return nodes


def spoken_between(units: Sequence[TranscriptUnit], start: float, end: float, limit: int) -> str:
    """Transcript text overlapping ``[start, end]``, at most ``limit`` characters."""
    text = " ".join(u.text for u in units if u.start < end and u.end > start)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _chunk_lines(lines: Sequence[str], max_chars: int) -> Iterator[str]:
    chunk: list[str] = []
    for line in lines:
        if chunk and len("\n".join([*chunk, line])) > max_chars:
            yield "\n".join(chunk)
            chunk = []
        chunk.append(line[:max_chars])
    if chunk:
        yield "\n".join(chunk)


def _exclude_locators(node: TextNode) -> None:
    node.excluded_embed_metadata_keys = list(schema.EMBED_EXCLUDED_KEYS)
    node.excluded_llm_metadata_keys = list(schema.LLM_EXCLUDED_KEYS)


def _link_source(node: TextNode, source: SourceFile) -> None:
    node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
        node_id=source.doc_id,
        node_type=ObjectType.DOCUMENT,
        metadata={schema.SOURCE: str(source.path)},
    )


def link_moments(units: Sequence[BaseNode], shown: Sequence[BaseNode]) -> None:
    """Record, in metadata, which frame each unit was spoken over and the reverse.

    A unit gets the ``frame_id`` of the frame on screen longest during it (else the
    nearest); a frame or OCR node gets the ``unit_id`` of the unit spoken when it
    appeared (else the nearest); a frame gets the ``ocr_ids`` of the text read on it.
    ``""`` means there is none. These links let ``TimestampFramePostprocessor`` fetch
    context by id, which vector stores answer far faster than time-range filters.
    """
    frames = [n for n in shown if n.metadata.get(schema.MODALITY) == "frame"]
    texts = [n for n in shown if n.metadata.get(schema.MODALITY) == "ocr"]
    for unit in units:
        unit.metadata[schema.FRAME_ID] = closest(unit, frames, by_overlap=True)
    for node in shown:
        node.metadata[schema.UNIT_ID] = closest(node, units, by_overlap=False)
    for frame in frames:
        frame.metadata[schema.OCR_IDS] = " ".join(t.node_id for t in texts if shows_text(frame, t))
