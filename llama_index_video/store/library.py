"""The library: what an index holds, and taking sources out of it.

One :class:`LibraryEntry` per indexed path (a file moved or copied keeps one content
and several paths), plus one per failed content. Moments are counted by modality from
the vector store's own rows; language and speakers come from the transcript's
metadata. Removing a source forgets its path; when no other path holds the same
content, the content's rows, frames, clips and manifest entry go too, and nothing
else (the media file itself is never touched).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
)

from llama_index_video import schema
from llama_index_video.sources.origin import read_origin
from llama_index_video.store.collection import content_nodes
from llama_index_video.store.ingest import Ingestor
from llama_index_video.store.manifest import Manifest, PathRecord


@dataclass(frozen=True)
class LibraryEntry:
    """One source of the index, as ``list`` and ``/api/library`` show it."""

    source: str  # the path as ingested, or the link it was downloaded from
    path: str | None  # the local file, absolute (None for a failure with no path)
    content_hash: str
    status: str  # "indexed", "failed", "indexing", or "missing" (file gone)
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
        status = content.status if Path(path).exists() else "missing"
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
                reason=content.notes,
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


def transcript(store: BasePydanticVectorStore, content_hash: str) -> list[TranscriptLine]:
    """The transcript units of a content, in time order."""
    lines = [
        TranscriptLine(
            float(node.metadata[schema.START_S]),
            float(node.metadata[schema.END_S]),
            node.get_content(),
            str(node.metadata[schema.SPEAKER]) if node.metadata.get(schema.SPEAKER) else None,
        )
        for node in content_nodes(store, content_hash)
        if node.metadata.get(schema.MODALITY) == "transcript"
    ]
    return sorted(lines, key=lambda line: line.start)


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
