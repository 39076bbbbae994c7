"""The library: what an index holds, and taking sources out of it.

One :class:`LibraryEntry` per indexed path (a file moved or copied keeps one content
and several paths), plus one per failed content. Moments are counted by modality from
the vector store's own rows; language and speakers come from the transcript's
metadata. Those counts are kept in the manifest as each content's summary
(:func:`summarize`), so :func:`listed` lists an index from the manifest alone, with no
vector store or LlamaIndex loaded (a cold ``list``); :func:`library` counts what has
no summary yet (an index from before summaries, a live recording that grew) and keeps
it. Removing a source forgets its path; when no other path holds the same content,
the content's rows, frames, clips and manifest entry go too, and nothing else (the
media file itself is never touched).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video import schema
from llama_index_video.errors import VideoIndexError
from llama_index_video.sources.origin import read_origin
from llama_index_video.speakers.base import speaker_order
from llama_index_video.store.collection import content_nodes
from llama_index_video.store.live import LIVE_NOTE
from llama_index_video.store.manifest import ContentSummary, FileRecord, Manifest, PathRecord

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.store.ingest import Ingestor

logger = logging.getLogger(__name__)
_NOTHING = ContentSummary(moments={}, language=None, speakers=[])
"""What a content not (or not yet) completely indexed shows: readers see none of it."""


@dataclass(frozen=True)
class LibraryEntry:
    """One source of the index, as ``list`` and ``/api/library`` show it."""

    source: str  # the link it was downloaded from, else ``path``
    path: str | None  # the local file, absolute (None for a failure with no path)
    content_hash: str
    status: str  # "indexed", "live", "failed", "indexing", or "missing" (file gone)
    duration: float | None = None
    moments: dict[str, int] = field(default_factory=dict)
    language: str | None = None  # "de"; "en+de" when it changes, in the order first heard
    speakers: list[str] = field(default_factory=list)
    indexed_at: float | None = None
    reason: str = ""


def library(manifest: Manifest, store: BasePydanticVectorStore) -> list[LibraryEntry]:
    """Every indexed path, then every failed content, with what it holds; contents
    with no summary yet are counted from their rows and their summary kept."""
    summaries = manifest.summaries()

    def summary_of(content: FileRecord) -> ContentSummary:
        if content.content_hash not in summaries:
            summaries[content.content_hash] = summarize(manifest, store, content.content_hash)
        return summaries[content.content_hash]

    return _entries(manifest, summary_of)


def listed(manifest: Manifest) -> list[LibraryEntry] | None:
    """:func:`library` from the manifest alone, or None when a content has no summary
    yet, or the manifest lists nothing (it may have been lost: only the vector store
    can tell)."""
    summaries = manifest.summaries()
    if manifest.lists_nothing() or any(
        content.content_hash not in summaries for content in manifest.files("indexed")
    ):
        return None
    return _entries(manifest, lambda content: summaries[content.content_hash])


def summarize(
    manifest: Manifest, store: BasePydanticVectorStore, content_hash: str
) -> ContentSummary:
    """Count what the rows of ``content_hash`` hold and keep it in the manifest (not
    when the manifest is read-only or busy: the next :func:`library` counts again)."""
    metadata = _rows(store, content_hash)
    summary = ContentSummary(
        moments=dict(Counter(str(m.get(schema.MODALITY)) for m in metadata)),
        language=_languages(metadata),
        speakers=sorted({str(m[schema.SPEAKER]) for m in metadata if m.get(schema.SPEAKER)}),
    )
    try:
        manifest.set_summary(content_hash, summary)
    except VideoIndexError as exc:  # another process holds the manifest: count next time
        logger.debug("%s: summary not kept: %s", manifest.db_file, exc)
    return summary


def _entries(
    manifest: Manifest, summary_of: Callable[[FileRecord], ContentSummary]
) -> list[LibraryEntry]:
    entries = []
    for record in manifest.all_paths():
        content = manifest.file(record.content_hash)
        if content is None:
            continue
        summary = summary_of(content) if content.status == "indexed" else _NOTHING
        path = manifest.located(record)
        origin = read_origin(Path(path))
        status: str = content.status if Path(path).exists() else "missing"
        if status == "indexed" and content.notes == LIVE_NOTE:
            status = "live"  # still being recorded (store.live)
        entries.append(
            LibraryEntry(
                source=origin.url if origin else path,
                path=path,
                content_hash=record.content_hash,
                status=status,
                duration=content.duration,
                moments=summary.moments,
                language=summary.language,
                speakers=sorted(summary.speakers, key=speaker_order),  # kept sorted as text
                indexed_at=manifest.updated_at(record.content_hash),
                reason=content.error or content.notes,
            )
        )
    for content in manifest.files("failed"):
        if not manifest.paths_of(content.content_hash):
            # a file that changed and failed: its path lists the content indexed before
            read_from = manifest.failed_path(content.content_hash)
            entries.append(
                LibraryEntry(
                    source=read_from or content.content_hash[:12],
                    path=read_from,
                    content_hash=content.content_hash,
                    status="failed",
                    indexed_at=manifest.updated_at(content.content_hash),
                    reason=content.error,
                )
            )
    return entries


@dataclass(frozen=True)
class TranscriptLine:
    """One transcript unit of a source, for reading along with the recording."""

    start: float
    end: float
    text: str
    speaker: str | None = None
    language: str | None = None  # the language the unit was heard in, where known


def transcript(
    store: BasePydanticVectorStore,
    content_hash: str,
    *,
    start: float | None = None,
    end: float | None = None,
) -> list[TranscriptLine]:
    """The transcript units of a content in time order; with ``start`` and/or ``end``,
    only the units that overlap that span (with both, one filtered query, not the whole
    recording)."""
    nodes = (
        moments_between(store, content_hash, start, end, ("transcript",))
        if start is not None and end is not None
        else content_nodes(store, content_hash)
    )
    lines = [
        TranscriptLine(
            float(node.metadata[schema.START_S]),
            float(node.metadata[schema.END_S]),
            node.get_content(),
            _text_or_none(node.metadata.get(schema.SPEAKER)),
            _text_or_none(node.metadata.get(schema.LANGUAGE)),
        )
        for node in nodes
        if node.metadata.get(schema.MODALITY) == "transcript"
    ]
    return _said_once(
        sorted(
            (
                line
                for line in lines
                if (start is None or line.end >= start) and (end is None or line.start <= end)
            ),
            key=lambda line: line.start,
        )
    )


def _said_once(lines: list[TranscriptLine]) -> list[TranscriptLine]:
    """The lines as said: a unit cut inside a sentence begins with the last words of the
    unit before (carried for retrieval, :func:`~llama_index_video.reader.units.
    build_units`); a transcript says them once, from where the unit before ended."""
    said: list[TranscriptLine] = []
    for line in lines:
        before = said[-1] if said else None
        if before is not None and line.start < before.end and line.speaker == before.speaker:
            words = line.text.split()
            carried = _carried(before.text.split(), words)
            if 0 < carried < len(words):
                line = replace(line, start=before.end, text=" ".join(words[carried:]))
        said.append(line)
    return said


def _carried(before: list[str], words: list[str]) -> int:
    """How many of ``words``' first words end ``before`` (the longest such run)."""
    longest = min(len(before), len(words))
    return next((n for n in range(longest, 0, -1) if before[-n:] == words[:n]), 0)


def _text_or_none(value: object) -> str | None:
    return str(value) if value else None


def moments_between(
    store: BasePydanticVectorStore,
    content_hash: str,
    start: float,
    end: float,
    modalities: tuple[str, ...],
) -> list[BaseNode]:
    """The stored moments of one content and these modalities that overlap ``[start, end]``.

    Media paths come back as stored (relative to the index folder).
    """
    from llama_index.core.vector_stores.types import (
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    filters = MetadataFilters(
        filters=[
            MetadataFilter(key=schema.CONTENT_HASH, value=content_hash),
            MetadataFilter(key=schema.MODALITY, value=list(modalities), operator=FilterOperator.IN),
            MetadataFilter(key=schema.START_S, value=end, operator=FilterOperator.LTE),
            MetadataFilter(key=schema.END_S, value=start, operator=FilterOperator.GTE),
        ]
    )
    try:
        return list(store.get_nodes(None, filters=filters))
    except NotImplementedError:
        return []


def remove_source(ingestor: Ingestor, manifest: Manifest, record: PathRecord) -> bool:
    """Forget one path; drop its content when no other path holds it. True if dropped."""
    manifest.forget_path(record.path)
    if not manifest.held_by_no_path(record.content_hash):
        return False
    ingestor.remove(record.content_hash)
    return True


def _rows(store: BasePydanticVectorStore, content_hash: str) -> list[dict[str, object]]:
    return [node.metadata for node in content_nodes(store, content_hash)]


def _languages(metadata: list[dict[str, object]]) -> str | None:
    """The languages its moments were heard in, in order of first appearance: ``en+de``."""
    timed = sorted(
        (m for m in metadata if m.get(schema.LANGUAGE)),
        key=lambda m: float(m.get(schema.START_S) or 0.0),  # type: ignore[arg-type]
    )
    return "+".join(dict.fromkeys(str(m[schema.LANGUAGE]) for m in timed)) or None
