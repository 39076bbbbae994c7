"""The indexed recording a name refers to, and the spans a caller may ask of it.

Read from the manifest alone (no vector store, no LlamaIndex), so a door that only
names a recording and cuts it (``clip``) starts without loading them. Only what the
manifest recorded can be named, so no caller reaches a file the index does not list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from llama_index_video import schema
from llama_index_video.errors import MomentRequestError, printable_path
from llama_index_video.sources.origin import read_origin
from llama_index_video.store.manifest import Manifest, PathRecord


@dataclass(frozen=True)
class IndexedSource:
    """An indexed recording named by a caller (an agent's tool, MCP, ``clip``)."""

    source: str  # how results name it: its file's absolute path, where it is now
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
    path = manifest.located(record)
    return IndexedSource(path, path, record.content_hash, content.duration)


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
