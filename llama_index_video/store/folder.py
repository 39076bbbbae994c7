"""The index folder: its layout, its recorded settings, and who may load its vectors when.

An index folder holds::

    manifest.sqlite     what is indexed, and the settings the index was built with
    chroma/             the vector store (unless it lives on a Chroma server)
    media/frames/       frames the reader wrote   (media/clips/: clips)
    media/downloads/    files downloaded from links
    write.lock          the writer lock, and the write generation

This module is the one place that knows those names (the media folder's, with the
rules for paths inside it, are :mod:`llama_index_video.store.media_paths`'s), what the
manifest records about how the index was built (format, embedding, collection,
server) and whether this version and model may open it, what to say when a folder
holds no index, and where a damaged file is moved aside (:meth:`IndexFolder.set_aside`).

How the index was built is kept twice: in the manifest, and as one JSON value in the
Chroma collection's metadata (:data:`SETTINGS_KEY`). A manifest lost and rebuilt from
the rows (:func:`~llama_index_video.store.integrity.rebuild_manifest`) takes the
settings back from there, so the index still refuses another embedding model; so does
an ``ingest`` into a folder whose manifest lists nothing yet.

Vectors loaded before another writer: Chroma keeps one open database per folder and
process, and its in-memory vector index (HNSW) never sees rows another process added.
A process that loaded it and then writes (its ``ingest`` waited for another one, or an
app kept a ``VideoIndex`` open while another process ingested) would persist its stale
copy over the other writer's: rows stay in the store, but the vector index no longer
reaches them. So the write generation the process's Chroma reflects is remembered per
folder (:func:`note_loaded`, read before Chroma is opened), and a writer, once it holds
the lock, asks :func:`vectors_stale` and reopens the vectors when anyone wrote in
between (:mod:`llama_index_video.store.lock` keeps the generation).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Final

from llama_index_video._version import __version__
from llama_index_video.embeddings.identity import canonical_identity
from llama_index_video.errors import IndexCompatibilityError, VideoIndexError
from llama_index_video.store.collection import open_here, release_chroma
from llama_index_video.store.lock import LOCK_NAME, WriterLock, read_generation
from llama_index_video.store.manifest import Manifest
from llama_index_video.store.media_paths import DOWNLOADS_FOLDER, MEDIA_FOLDER, MEDIA_SUBFOLDERS

MANIFEST_FILE: Final = "manifest.sqlite"
CHROMA_FOLDER: Final = "chroma"
FRAMES_FOLDER, CLIPS_FOLDER = MEDIA_SUBFOLDERS

INDEX_FORMAT: Final = "1"
FORMAT_META: Final = "format"
EMBEDDING_META: Final = "embedding"
SPEC_META: Final = "embedding_spec"
CHROMA_URL_META: Final = "chroma_url"
COLLECTION_META: Final = "collection"
CREATED_BY_META: Final = "created_by"
SETTINGS_KEY: Final = "llama_index_video_settings"
"""The collection metadata key holding the settings :func:`record_settings` recorded."""
DAMAGED_MARK: Final = ".damaged-"
"""In the name a damaged file or folder is moved aside to (``manifest.sqlite.damaged-…``)."""

logger = logging.getLogger(__name__)

_LOADED: dict[Path, int | None] = {}
"""Per index folder: the write generation this process's local Chroma reflects."""


class IndexFolder:
    """The paths of the index folder ``path`` (nothing is created or opened)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_file(self) -> Path:
        return self.path / MANIFEST_FILE

    @property
    def chroma(self) -> Path:
        return self.path / CHROMA_FOLDER

    @property
    def media(self) -> Path:
        return self.path / MEDIA_FOLDER

    @property
    def frames(self) -> Path:
        return self.media / FRAMES_FOLDER

    @property
    def downloads(self) -> Path:
        return self.media / DOWNLOADS_FOLDER

    @property
    def lock_file(self) -> Path:
        return self.path / LOCK_NAME

    def set_aside(self, path: Path) -> Path:
        """Move the damaged file or folder ``path`` of this index aside, with a database's
        ``-wal`` and ``-shm`` files, to ``NAME.damaged-YYYYMMDD-HHMMSS`` beside it (UTC);
        returns where it went. Nothing is deleted. Call holding the writer lock."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        target = path.with_name(f"{path.name}{DAMAGED_MARK}{stamp}")
        for number in range(2, 1000):  # ends: a free name among a thousand
            if not target.exists():
                break
            target = path.with_name(f"{path.name}{DAMAGED_MARK}{stamp}-{number}")
        os.replace(path, target)
        for suffix in ("-wal", "-shm"):
            beside = path.with_name(path.name + suffix)
            if beside.exists():
                os.replace(beside, target.with_name(target.name + suffix))
        return target

    def exists(self) -> bool:
        """Whether an index was created here (its manifest exists)."""
        return self.manifest_file.is_file()

    def require(self) -> None:
        """Raise :class:`VideoIndexError` (one line) when no index was created here."""
        if not self.exists():
            raise VideoIndexError(
                f"{self.path}: no index here; create it with "
                f"'llama-index-video ingest PATH --index {self.path}'"
            )

    def note_loaded(self) -> None:
        """Call just before opening this folder's local Chroma in this process: remembers
        the write generation it will reflect (kept if Chroma is already open here)."""
        key = self.path.absolute()
        if key not in _LOADED:  # opened here by other means: what it reflects is unknown
            _LOADED[key] = None if open_here(self.chroma) else read_generation(self.path)

    def release(self) -> None:
        """Drop this process's Chroma for the folder, so the next open reads it afresh
        (collections opened before no longer work; see ``release_chroma``)."""
        _LOADED.pop(self.path.absolute(), None)
        release_chroma(self.chroma)

    def vectors_stale(self, lock: WriterLock) -> bool:
        """Whether another writer may have written since this process loaded the vectors.

        Ask while holding ``lock`` (acquired); afterwards call :meth:`written_by`.
        """
        loaded = _LOADED.get(self.path.absolute())
        return loaded is None or lock.generation_before != loaded

    def written_by(self, lock: WriterLock) -> None:
        """This process holds ``lock`` and writes through its own Chroma from now on."""
        _LOADED[self.path.absolute()] = lock.generation

    def behind_writers(self) -> bool:
        """Whether a writer of another process has finished a version since this process
        loaded the vectors (or loaded them while one was at work): the folder's write
        generation is a finished one, and not the one loaded. False while a writer is at
        work: its version is not finished, and loading the vectors then would race it."""
        generation = read_generation(self.path)
        return generation is not None and generation != _LOADED.get(self.path.absolute())

    def loaded_mid_write(self) -> bool:
        """Whether this process's vectors were loaded while a writer was at work (or it
        cannot be known), so that they may hold rows of a version not finished."""
        return _LOADED.get(self.path.absolute()) is None

    def changed_since_loaded(self) -> bool:
        """Whether another process wrote since this process loaded the vectors (a cheap
        read of the lock file; True when that cannot be known)."""
        loaded = _LOADED.get(self.path.absolute())
        return loaded is None or read_generation(self.path) != loaded


def check_compatible(
    manifest: Manifest, folder: Path, identity: str, *, collection: Any | None = None
) -> None:
    """Refuse an index of another format, or built with another embedding model: as the
    manifest records, or, where it records nothing (lost), as the Chroma ``collection``
    keeps (:func:`kept_settings`).

    Raises:
        IndexCompatibilityError: naming the folder, both sides and the way out.
    """
    kept = kept_settings(collection)
    version = manifest.get_meta(FORMAT_META) or kept.get(FORMAT_META)
    if version is not None and version != INDEX_FORMAT:
        raise IndexCompatibilityError(
            f"{folder}: index format {version} is not readable by llama-index-video "
            f"{__version__} (format {INDEX_FORMAT}); re-ingest into a new folder"
        )
    built_with = manifest.get_meta(EMBEDDING_META) or kept.get(EMBEDDING_META)
    if built_with is not None and canonical_identity(built_with) != identity:
        raise IndexCompatibilityError(
            f"{folder}: built with embedding model {built_with}, opened with "
            f"{identity}; open it with the same model or ingest into a new folder"
        )


def record_settings(
    manifest: Manifest, settings: dict[str, str | None], *, collection: Any | None = None
) -> None:
    """Record how the index is built (keys above; None values are left as they are),
    with this format and version, in one transaction; and keep the same in the Chroma
    ``collection``'s metadata (when it differs), for a manifest rebuilt from the rows."""
    with manifest.transaction():
        manifest.set_meta(FORMAT_META, INDEX_FORMAT)
        for key, value in settings.items():
            if value is not None:
                manifest.set_meta(key, value)
        manifest.set_meta(CREATED_BY_META, f"llama-index-video {__version__}")
    if collection is None:
        return
    recorded = {key: manifest.get_meta(key) for key in (FORMAT_META, CREATED_BY_META, *settings)}
    keep = {key: value for key, value in recorded.items() if value is not None}
    if keep == kept_settings(collection):
        return
    try:
        collection.modify(metadata={**(collection.metadata or {}), SETTINGS_KEY: json.dumps(keep)})
    except Exception as exc:  # chromadb's own errors: the manifest still records them
        logger.warning("%s: settings not kept in the vector store: %s", manifest.db_file, exc)


def kept_settings(collection: Any | None) -> dict[str, str]:
    """The settings :func:`record_settings` kept in a Chroma ``collection``'s metadata
    ({} when it kept none, or for no collection)."""
    metadata = getattr(collection, "metadata", None) or {}
    try:
        kept = json.loads(str(metadata.get(SETTINGS_KEY) or "{}"))
    except ValueError:
        return {}
    if not isinstance(kept, dict):
        return {}
    return {str(key): str(value) for key, value in kept.items()}
