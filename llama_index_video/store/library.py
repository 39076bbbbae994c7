"""The library: what an index holds, and taking sources out of it.

One :class:`LibraryEntry` per indexed path (a file moved or copied keeps one content
and several paths), plus one per failed content. Moments are counted by modality from
the vector store's own rows; language and speakers come from the transcript's
metadata. Removing a source forgets its path; when no other path holds the same
content, the content's rows, frames, clips and manifest entry go too, and nothing
else (the media file itself is never touched).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index_video import schema
from llama_index_video.errors import MomentRequestError, printable_path
from llama_index_video.sources.origin import read_origin
from llama_index_video.store.collection import content_nodes
from llama_index_video.store.ingest import Ingestor
from llama_index_video.store.live import LIVE_NOTE
from llama_index_video.store.manifest import Manifest, PathRecord


@dataclass(frozen=True)
class LibraryEntry:
    """One source of the index, as ``list`` and ``/api/library`` show it."""

    source: str  # the path as ingested, or the link it was downloaded from
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
    """Every indexed path, then every failed content, with what it holds."""
    entries = []
    for record in manifest.all_paths():
        content = manifest.file(record.content_hash)
        if content is None:
            continue
        metadata = _rows(store, record.content_hash)
        path = manifest.located(record)
        origin = read_origin(Path(path))
        status: str = content.status if Path(path).exists() else "missing"
        if status == "indexed" and content.notes == LIVE_NOTE:
            status = "live"  # still being recorded (store.live)
        entries.append(
            LibraryEntry(
                source=origin.url if origin else record.source,
                path=path,
                content_hash=record.content_hash,
                status=status,
                duration=content.duration,
                moments=dict(Counter(str(m.get(schema.MODALITY)) for m in metadata)),
                language=_languages(metadata),
                speakers=sorted(
                    {str(m[schema.SPEAKER]) for m in metadata if m.get(schema.SPEAKER)}
                ),
                indexed_at=manifest.updated_at(record.content_hash),
                reason=content.error or content.notes,
            )
        )
    for content in manifest.files("failed"):
        if not manifest.paths_of(content.content_hash):
            entries.append(
                LibraryEntry(
                    source=content.content_hash[:12],
                    path=None,
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
    return sorted(
        (
            line
            for line in lines
            if (start is None or line.end >= start) and (end is None or line.start <= end)
        ),
        key=lambda line: line.start,
    )


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


@dataclass(frozen=True)
class IndexedSource:
    """An indexed recording named by a caller (an agent's tool, MCP, ``clip``)."""

    source: str  # the path as ingested
    path: str  # the local file, absolute
    content_hash: str
    duration: float | None

    @property
    def name(self) -> str:
        return Path(self.source).name


def resolve_source(manifest: Manifest, name: str) -> IndexedSource:
    """The indexed recording ``name`` refers to: a path or link (as :func:`find_source`),
    or else a file name (``team_sync.mp3``, as labels show it) that only one recording has.

    Only what the manifest recorded can be named, so a caller cannot reach other files.

    Raises:
        MomentRequestError: no indexed recording has this name, several do, or it is
            not (or no longer) indexed.
    """
    records = find_source(manifest, name) or [
        r for r in manifest.all_paths() if Path(r.source).name == name
    ]
    contents = {r.content_hash for r in records}
    shown = printable_path(name)
    if not records:
        raise MomentRequestError(
            f"{shown}: unknown source; list the recordings ('llama-index-video list' or the "
            "list_recordings tool) and name one as it shows it"
        )
    if len(contents) > 1:
        raise _ambiguous(name, [r.source for r in records])
    record = records[0]
    content = manifest.file(record.content_hash)
    if content is None or content.status != "indexed":
        raise MomentRequestError(f"{shown}: not indexed (yet); run 'llama-index-video ingest'")
    return IndexedSource(
        record.source, manifest.located(record), record.content_hash, content.duration
    )


def check_span(
    source: IndexedSource,
    start: float,
    end: float,
    *,
    max_seconds: float | None = None,
    instant: bool = False,
) -> None:
    """Refuse a span that is not inside ``source``'s recording or is too long;
    ``instant``: a span of no length (``start == end``, one moment to read) is one too.

    Raises:
        MomentRequestError: a time that is not finite, a time before 0, ``start >= end``
            or a time after the recording's end, or ``end - start > max_seconds``; the message
            says what is allowed.
    """
    name = printable_path(source.name)
    length = source.duration
    if not (math.isfinite(start) and math.isfinite(end)):  # NaN passes every comparison
        raise MomentRequestError(f"{name}: the span {start:g}-{end:g} s is not finite; give times")
    if start < 0:
        raise MomentRequestError(
            f"{name}: {start:g} s is before the start of the recording; give times from 0 s"
        )
    if end < start or (end == start and not instant):
        raise MomentRequestError(
            f"{name}: the span {start:g}-{end:g} s is empty or negative; give start < end"
        )
    if length is not None and end > length + 0.5:  # a label's rounding may pass the end
        raise MomentRequestError(
            f"{name}: {schema.format_timestamp(end)} is after the end of the recording "
            f"({schema.format_timestamp(length)}); give times up to {length:.1f} s"
        )
    if max_seconds is not None and end - start > max_seconds:
        raise MomentRequestError(
            f"{name}: a span of {end - start:.0f} s is over the limit of {max_seconds:g} s; "
            "ask for a shorter one"
        )


def find_source(manifest: Manifest, name: str) -> list[PathRecord]:
    """The path records ``name`` (a path, or a link) refers to.

    A path means the file it names from the working directory; only when no indexed
    file is there does it match the path as given to ``ingest`` (the ``source`` a search
    hit shows, relative to the directory ingest ran in).
    """
    records = manifest.all_paths()
    if "://" in name:
        return [
            record
            for record in records
            if (origin := read_origin(Path(manifest.located(record)))) and origin.url == name
        ]
    named = {name, str(Path(name).resolve())}
    return [r for r in records if {r.path, manifest.located(r)} & named] or [
        r for r in records if r.source == name
    ]


def source_to_remove(manifest: Manifest, name: str) -> PathRecord | None:
    """The one indexed file ``name`` names (as :func:`find_source`); None: no file.

    Raises:
        MomentRequestError: ``name`` names several files (the same relative path
            ingested from two folders); the message lists them and asks for a path.
    """
    records = find_source(manifest, name)
    if len(records) > 1:
        raise _ambiguous(name, [manifest.located(r) for r in records])
    return records[0] if records else None


def _ambiguous(name: str, paths: list[str]) -> MomentRequestError:
    listed = ", ".join(sorted(printable_path(p) for p in paths))
    return MomentRequestError(
        f"{printable_path(name)}: names {len(paths)} recordings ({listed}); give a path"
    )


def remove_source(ingestor: Ingestor, manifest: Manifest, record: PathRecord) -> bool:
    """Forget one path; drop its content when no other path holds it. True if dropped."""
    manifest.forget_path(record.path)
    if manifest.paths_of(record.content_hash):
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
