"""Which files the service may send, named by opaque ids and never by path.

A video or audio file is addressed as ``/media/<content hash>``: the id the manifest
already keys files by. It is sent only if the manifest lists that content as indexed,
and only from a path the manifest recorded for it (a download: where it is now, in
this index folder) that still resolves to itself (no symlink appeared since ingest)
and still has the recorded size. Frames are addressed as ``/frames/<name>``: a name of
the shape the reader writes (``<hash16>_<ms>.jpg``), whose hash prefix belongs to an
indexed file, inside the index's frames folder once resolved. Nothing in a request is
ever joined to a path unchecked, so ``..``, absolute paths, symlinks out of the folder
and files that are not indexed all end in 404.

The search contract names files by ``source_path`` (else ``source``, the path as given
to ``ingest``, which two working directories may share) and ``frame_path`` (only its
name counts: the frames folder is this index's, wherever the folder has moved);
:meth:`MediaCatalog.urls` turns those into the URLs above, which the service adds to
each hit as ``media_url``, ``media_type`` and ``frame_url``.
"""

from __future__ import annotations

import functools
import mimetypes
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from llama_index_video.media.names import FRAME_NAME, source_prefix
from llama_index_video.store.manifest import Manifest, PathRecord

MEDIA_ROUTE = "/media/"
FRAME_ROUTE = "/frames/"
_CONTENT_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class MediaFile:
    """An indexed video or audio file the service may send."""

    content_hash: str
    path: Path
    media_type: str


@dataclass(frozen=True)
class MediaUrls:
    """The URLs the page needs for one hit (each None when there is nothing to send)."""

    media_url: str | None
    media_type: str | None
    frame_url: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "media_url": self.media_url,
            "media_type": self.media_type,
            "frame_url": self.frame_url,
        }


class MediaCatalog:
    """A snapshot of the manifest's indexed files, for serving their media and frames.

    Args:
        manifest: The index's manifest, read once here.
        frames_dir: The folder the reader writes frames to (``<index>/media/frames``).
    """

    def __init__(self, manifest: Manifest, frames_dir: Path) -> None:
        self._paths: dict[str, list[PathRecord]] = {}
        self._by_source: dict[str, str] = {}
        self._by_path: dict[str, str] = {}
        for record in manifest.files("indexed"):
            paths = [
                replace(p, path=manifest.located(p)) for p in manifest.paths_of(record.content_hash)
            ]
            self._paths[record.content_hash] = paths
            for path in paths:
                self._by_source.setdefault(path.source, record.content_hash)
                self._by_path[path.path] = record.content_hash
        self._frame_prefixes = {source_prefix(content_hash) for content_hash in self._paths}
        self._frames_dir = frames_dir.resolve()

    def media(self, content_hash: str) -> MediaFile | None:
        """The playable file with this content hash, or None if it must not be sent."""
        if not _CONTENT_HASH.fullmatch(content_hash):
            return None
        for record in self._paths.get(content_hash, []):
            path = Path(record.path)
            media_type = mimetypes.guess_type(path.name)[0] or ""
            if not media_type.startswith(("video/", "audio/")):
                continue
            try:
                unchanged = path.resolve(strict=True) == path and path.stat().st_size == record.size
            except OSError:
                continue
            if unchanged and path.is_file():
                return MediaFile(content_hash, path, media_type)
        return None

    def frame(self, name: str) -> Path | None:
        """The frame image called ``name``, or None if it must not be sent."""
        match = FRAME_NAME.fullmatch(name)
        if match is None or match.group(1) not in self._frame_prefixes:
            return None
        try:
            path = (self._frames_dir / name).resolve(strict=True)
        except OSError:
            return None
        return path if path.parent == self._frames_dir and path.is_file() else None

    def urls(
        self, source: str, frame_path: str | None, source_path: str | None = None
    ) -> MediaUrls:
        """URLs for a hit's media file and frame, from its ``source_path`` (else its
        ``source``) and ``frame_path``."""
        return self.urls_of([(source, frame_path, source_path)])[0]

    def urls_of(self, hits: Sequence[tuple[str, str | None, str | None]]) -> list[MediaUrls]:
        """:meth:`urls` of each ``(source, frame_path, source_path)``; each file and frame
        is checked once, however many of the hits show it."""
        media = functools.cache(self.media)
        frame = functools.cache(self.frame)
        found = []
        for source, frame_path, source_path in hits:
            content_hash = self._by_path.get(source_path or "") or self._by_source.get(source)
            shown = media(content_hash) if content_hash else None
            name = Path(frame_path).name if frame_path else None
            found.append(
                MediaUrls(
                    media_url=None if shown is None else MEDIA_ROUTE + shown.content_hash,
                    media_type=None if shown is None else shown.media_type,
                    frame_url=FRAME_ROUTE + name if name and frame(name) is not None else None,
                )
            )
        return found

    @property
    def file_count(self) -> int:
        """How many indexed contents the snapshot holds."""
        return len(self._paths)
