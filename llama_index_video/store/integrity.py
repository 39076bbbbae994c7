"""Does the index folder hold what its manifest says? Checks for ``verify`` and ``ingest``.

The manifest is the index's word on what is indexed; the vector store and the media
folder must back it. :func:`check_index` compares them:

- per indexed content, the rows the manifest counts against the rows the store holds
  (fewer rows: the content is *missing* moments and must be re-indexed);
- per indexed content, when ``verify`` checks each one, the frames its rows name that
  are gone from ``media/`` (*lost* frames: a hit would show a frame that is not there,
  so the content is re-indexed too);
- rows of contents the manifest does not list as indexed (*stray* rows: left by an
  interrupted run, or by a removal that did not finish);
- files in ``media/`` of no indexed content (*orphan* frames and clips), and partial
  files (``.part``, ``.partial``) a killed run left behind;
- when ``verify`` checks each content, indexed contents that no path names (*unnamed*:
  searchable, yet no file's; left by an interrupted run of an earlier version), but
  those a stopped live recording goes on from
  (:func:`~llama_index_video.store.live.stopped_contents`);
- contents left ``indexing`` (an interrupted run) and removals not yet done, and those
  a clean-up took out to be indexed again (:data:`TO_REINDEX`) that are not back yet
  (the repair that took them out was itself interrupted), when a path to read them
  from was recorded;
- what search can reach (:data:`REACHABILITY_CHECKS`): every stored row of every
  store must be found through its vector index, not only listed (*unreachable* rows:
  their vectors went missing from the index, e.g. overwritten by a stale copy);
- the lexical index (:mod:`llama_index_video.store.lexical`), when there is one: the
  words of every indexed content's moments, no others, and matrices built since the
  last change.

A manifest that lists nothing beside a vector store holding rows was emptied or lost
(SQLite reads a 0-byte file as an empty database): the check says so
(``manifest_lost``) and looks no further, since every row and frame would otherwise
count as a stray; :func:`rebuild_manifest` records the contents again from the rows,
which carry each one's content hash and the path it was ingested as, and the settings
the index was built with from the collection
(:func:`~llama_index_video.store.folder.kept_settings`).

A manifest or a Chroma database that is not a database at all (SQLite cannot read
it) stops every command in one line; ``verify --repair`` first moves it aside
(:func:`set_aside_damaged`, kept beside it as ``NAME.damaged-…``), then rebuilds: a
new, empty manifest beside the rows is a lost one (above); a new, empty vector store
beside the manifest is missing every file's moments, re-indexed from the files the
manifest lists (those that are gone are failed, named).

Counting per content asks the store once per content, so ``ingest`` only does it when
the store's total row count differs from the manifest's (one cheap count each);
``verify`` always does. Counts need a store that can count (Chroma); with another
LlamaIndex vector store the row checks are skipped and said to be.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index_video import schema
from llama_index_video.errors import IndexCorruptError
from llama_index_video.media.names import source_prefix
from llama_index_video.store.collection import (
    DATABASE_FILE,
    chroma_collection,
    release_chroma,
    row_counts,
    row_metadata,
    row_total,
    stray_row_ids,
    unreachable_ids,
)
from llama_index_video.store.folder import IndexFolder, kept_settings
from llama_index_video.store.lexical import LexicalCheck, LexicalStore, check_lexical
from llama_index_video.store.live import stopped_contents
from llama_index_video.store.lock import WriterLock
from llama_index_video.store.manifest import Manifest, PathRecord, connect_read_only
from llama_index_video.store.media_paths import MEDIA_SUBFOLDERS, resolved_path


@dataclass(frozen=True)
class SourceCheck:
    """One indexed content: the rows the manifest counts and the rows the store holds."""

    content_hash: str
    source: str
    expected: int
    found: int | None  # None: not counted
    lost_frames: int = 0  # frames its rows name that are not in the media folder
    notes: str = ""  # what its ingest noted (a silent recording: "no speech heard")

    @property
    def missing(self) -> int:
        return 0 if self.found is None else max(0, self.expected - self.found)

    @property
    def error(self) -> str:
        """Why a damaged content is indexed again (its manifest entry says so meanwhile)."""
        return MISSING_ROWS if self.missing else LOST_FRAMES


@dataclass(frozen=True)
class IndexCheck:
    """What :func:`check_index` found; empty lists mean all is well."""

    sources: list[SourceCheck] = field(default_factory=list)
    stray_rows: dict[str, list[str]] = field(default_factory=dict)  # store name -> row ids
    orphan_media: list[Path] = field(default_factory=list)
    partial_files: list[Path] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)
    counted: bool = True  # False: the store cannot count its rows
    lexical: LexicalCheck | None = None  # None: not checked (no lexical index)
    unreachable: dict[str, list[str]] = field(default_factory=dict)  # store -> row ids
    manifest_lost: int = 0  # rows stored while the manifest lists nothing (nothing else checked)
    to_reindex: list[str] = field(default_factory=list)  # taken out by a clean-up, not yet back
    voices: str = ""  # why the voice library cannot be read ("": it can, or there is none)
    # Long recordings without (finished) chapters: no damage, 'verify --repair' makes them.
    unchaptered: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)  # indexed, named by no path

    @property
    def damaged(self) -> list[SourceCheck]:
        """Indexed contents with moments missing from the store, or frames from ``media/``."""
        return [s for s in self.sources if s.missing or s.lost_frames]

    @property
    def ok(self) -> bool:
        return not (
            self.manifest_lost
            or self.to_reindex
            or self.damaged
            or any(self.stray_rows.values())
            or self.orphan_media
            or self.partial_files
            or self.interrupted
            or self.removals
            or (self.lexical is not None and not self.lexical.ok)
            or any(self.unreachable.values())
            or self.voices
            or self.unnamed
        )


INTERRUPTED = "interrupted; re-indexed on the next ingest"
MISSING_ROWS = "moments missing from the vector store; re-indexed on the next ingest"
LOST_FRAMES = "frames missing from the media folder; re-indexed on the next ingest"
TO_REINDEX = (INTERRUPTED, MISSING_ROWS, LOST_FRAMES)
"""The errors a clean-up records on the contents it takes out to be indexed again."""

ReachabilityCheck = Callable[[Any], list[str] | None]
"""Ids of a store's rows that one way search reaches them does not find (None: cannot
tell for this store)."""

REACHABILITY_CHECKS: dict[str, ReachabilityCheck] = {"vectors": unreachable_ids}
"""What search can reach, checked for every store by ``verify`` and at the start of
every ``ingest``: the one place to add another way search finds rows. (The lexical
index keeps its own rows and is checked by :func:`check_lexical` below.)"""


def check_index(
    manifest: Manifest,
    stores: dict[str, Any],
    media_dir: Path,
    *,
    per_source: bool,
    lexical: LexicalStore | None = None,
    folder: Path | None = None,
) -> IndexCheck:
    """Compare the manifest with the vector stores and the media folder.

    Args:
        manifest: The index's manifest.
        stores: The vector stores by name; the first holds every node (the text
            store), the others some of them (frame vectors).
        media_dir: Where frames and clips are written.
        per_source: Count each content's rows even when the totals agree.
        lexical: The index's lexical index, to check too; None: no lexical check.
        folder: The index folder, whose voice library is checked, and whose frames
            are looked for per content with ``per_source``; None: neither is checked.
    """
    from llama_index_video.store.voice_library import library_problem

    indexed = {record.content_hash: record for record in manifest.files("indexed")}
    main = next(iter(stores.values()))
    total = row_total(main)
    expected_total = sum(record.node_count for record in indexed.values())
    if total and not indexed and manifest.lists_nothing():
        return IndexCheck(manifest_lost=total)
    counts: dict[str, int] | None = None
    if total is not None and (per_source or total != expected_total):
        counts = row_counts(main, indexed)
    lost = lost_frames(main, indexed, folder) if per_source and folder is not None else {}
    sources = [
        SourceCheck(
            key,
            next((p.source for p in manifest.paths_of(key)), ""),
            record.node_count,
            None if counts is None else counts[key],
            len(lost.get(key, ())),
            record.notes,
        )
        for key, record in indexed.items()
    ]
    removals = manifest.removals()
    kept = {*indexed, *removals}  # a removal's rows, media and words go in a commit step
    stray: dict[str, list[str]] = {}
    if per_source or total != expected_total:
        for name, store in stores.items():
            ids = stray_row_ids(store, kept)
            if ids:
                stray[name] = ids
    keep = {source_prefix(key) for key in kept}
    orphans, partial = [], []
    for path in _media_files(media_dir):
        if _is_partial(path.name):
            partial.append(path)
        elif path.name.lstrip(".").split("_", 1)[0] not in keep:
            orphans.append(path)
    return IndexCheck(
        sources=sources,
        stray_rows=stray,
        orphan_media=orphans,
        partial_files=partial,
        interrupted=[r.content_hash for r in manifest.files("indexing")],
        to_reindex=[
            r.content_hash
            for r in manifest.files("failed")
            if r.error in TO_REINDEX and manifest.paths_of(r.content_hash)
        ],
        removals=removals,
        counted=total is not None,
        lexical=None
        if lexical is None
        else check_lexical(
            lexical, {k: r.node_count for k, r in indexed.items()}, removing=removals
        ),
        unreachable=unreachable_rows(stores),
        voices="" if folder is None else library_problem(folder),
        unnamed=_unnamed(manifest, indexed) if per_source else [],
    )


def _unnamed(manifest: Manifest, indexed: Collection[str]) -> list[str]:
    """The indexed contents no path names and no stopped live recording goes on from."""
    going_on = stopped_contents(manifest)
    return [key for key in indexed if key not in going_on and manifest.held_by_no_path(key)]


def lost_frames(store: Any, indexed: Collection[str], folder: Path) -> dict[str, set[str]]:
    """Per indexed content, the frames its rows in ``store`` name (a frame's and its
    on-screen text's ``image_path``) that are not in the index folder ``folder``; a
    content with none is left out. Nothing from a store that cannot list its rows."""
    lost: dict[str, set[str]] = {}
    for metadata in row_metadata(store):
        key, stored = metadata.get(schema.CONTENT_HASH), metadata.get(schema.IMAGE_PATH)
        if key in indexed and stored and not Path(resolved_path(str(stored), folder)).is_file():
            lost.setdefault(str(key), set()).add(str(stored))
    return lost


def lost_manifest(manifest: Manifest, rows: int, folder: Path) -> IndexCorruptError:
    """The one line for a manifest that lists nothing while the store holds ``rows``."""
    return IndexCorruptError(
        f"{manifest.db_file}: lists no file, but the vector store holds {rows} moments "
        "(the manifest was emptied or lost); run 'llama-index-video verify --repair "
        f"--index {folder}' to record them again from the stored moments"
    )


def rebuild_manifest(manifest: Manifest, store: Any) -> int:
    """Record again the contents whose rows ``store`` holds; returns how many.

    Each content becomes ``indexed`` with as many moments as it has rows and the end of
    its last moment as its duration; the settings the index was built with come back
    from the collection's metadata, where the manifest lost them (an index built before
    they were kept there has its embedding model recorded again at the next ingest,
    unchecked); its path is the file its stored source names (from
    the working directory, else from the index folder's parent), recorded with no size
    so that the next ingest hashes it again: a file changed since is replaced, one that
    is gone is listed as missing. Call holding the writer lock.
    """
    found: dict[str, tuple[int, float, str]] = {}  # content -> rows, end, source
    for metadata in row_metadata(store):
        key = str(metadata.get(schema.CONTENT_HASH) or "")
        if not key:
            continue
        rows, end, source = found.get(key, (0, 0.0, ""))
        stored_end = metadata.get(schema.END_S)
        found[key] = (
            rows + 1,
            max(end, float(stored_end)) if isinstance(stored_end, (int, float)) else end,
            source or str(metadata.get(schema.SOURCE) or ""),
        )
    home = manifest.db_file.parent.absolute().parent
    with manifest.transaction():
        for key, value in kept_settings(chroma_collection(store)).items():
            if manifest.get_meta(key) is None:
                manifest.set_meta(key, value)
        for key, (rows, end, source) in found.items():
            manifest.set_file(key, "indexed", node_count=rows, duration=end or None)
            if source:
                path = next((p for p in (Path(source), home / source) if p.is_file()), Path(source))
                manifest.set_path(PathRecord(str(path.resolve()), source, key, -1, 0))
    return len(found)


def set_aside_damaged(folder: Path, *, wait: float) -> list[tuple[Path, Path]]:
    """Move aside the manifest and the local Chroma database if SQLite cannot read them
    (not a database, or its own check fails), holding the writer lock; returns each
    damaged path with where it went. ``verify --repair`` then rebuilds them (see the
    module docstring)."""
    index = IndexFolder(folder)
    moved: list[tuple[Path, Path]] = []
    with WriterLock(folder) as lock:
        lock.acquire(wait=wait)
        if _unreadable(index.manifest_file):
            moved.append((index.manifest_file, index.set_aside(index.manifest_file)))
        if _unreadable(index.chroma / DATABASE_FILE):
            release_chroma(index.chroma)
            moved.append((index.chroma / DATABASE_FILE, index.set_aside(index.chroma)))
    return moved


def _unreadable(database: Path) -> bool:
    """Whether the SQLite file ``database`` exists and is not a sound database."""
    if not database.is_file():
        return False
    try:
        db, _ = connect_read_only(database, probe="SELECT count(*) FROM sqlite_master")
    except sqlite3.DatabaseError:
        return True
    try:
        return [row[0] for row in db.execute("PRAGMA quick_check").fetchall()] != ["ok"]
    except sqlite3.DatabaseError:
        return True
    finally:
        db.close()


def unreachable_rows(stores: dict[str, Any]) -> dict[str, list[str]]:
    """Per store, the ids of rows some way of :data:`REACHABILITY_CHECKS` misses."""
    found: dict[str, list[str]] = {}
    for name, store in stores.items():
        missed: set[str] = set()
        for check in REACHABILITY_CHECKS.values():
            missed.update(check(store) or [])
        if missed:
            found[name] = sorted(missed)
    return found


def media_of(media_dir: Path, content_hash: str) -> Iterator[Path]:
    """The frames and clips (finished or partial) written for one content."""
    prefix = source_prefix(content_hash) + "_"
    for path in _media_files(media_dir):
        if path.name.lstrip(".").startswith(prefix):
            yield path


def _media_files(media_dir: Path) -> Iterator[Path]:
    for name in MEDIA_SUBFOLDERS:
        folder = media_dir / name
        if folder.is_dir():
            yield from (p for p in sorted(folder.iterdir()) if p.is_file())


def _is_partial(name: str) -> bool:
    return name.endswith(".part") or ".partial." in name
