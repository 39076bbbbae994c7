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
import logging
import mimetypes
import os
import re
import stat
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from llama_index_video.errors import MissingDependencyError

try:
    import anyio
    from starlette.responses import FileResponse
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError("fastapi", "serve", "The HTTP service") from exc

from llama_index_video.media.names import FRAME_NAME, source_prefix
from llama_index_video.media.probe import sound_only
from llama_index_video.store.manifest import Manifest, PathRecord

logger = logging.getLogger(__name__)

MEDIA_ROUTE = "/media/"
FRAME_ROUTE = "/frames/"
_CONTENT_HASH = re.compile(r"[0-9a-f]{64}")


_MEDIA_TYPES = {
    ".ts": "video/mp2t",  # Python's table: a Qt translation file
    ".mts": "video/mp2t",
    ".m2ts": "video/mp2t",
    ".3gp": "video/3gpp",  # Python's table: audio, so the page put it in an audio player
    ".3g2": "video/3gpp2",
    ".asf": "video/x-ms-asf",
    ".vob": "video/mpeg",
    ".mka": "audio/x-matroska",
    ".caf": "audio/x-caf",
    ".weba": "audio/webm",
}
"""Media types of recordings that Python's ``mimetypes`` table lacks or gets wrong."""


_SOUND_OF_VIDEO_TYPES = {"video/quicktime": "audio/mp4"}
"""The audio type of a video container's sound alone, where it is not ``audio/`` + the
video type's subtype (``video/webm`` -> ``audio/webm``)."""


def recording_media_type(path: Path) -> str | None:
    """The type a recording is sent as (``video/...`` or ``audio/...``); None for other files.

    A video container holding sound alone (an audio-only WebM, Matroska or MP4, as
    meeting recorders write) is sent as audio, so the page plays it in its audio player
    rather than an empty video frame.
    """
    guessed = _MEDIA_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or ""
    if guessed.startswith("video/") and _sound_only(path):
        subtype = guessed.removeprefix("video/")
        return _SOUND_OF_VIDEO_TYPES.get(guessed, f"audio/{subtype}")
    return guessed if guessed.startswith(("video/", "audio/")) else None


def _sound_only(path: Path) -> bool:
    """:func:`~llama_index_video.media.probe.sound_only`, read once per version of a file:
    every Range request of the player asks again, and ``/api/library`` for every file
    (a read costs 1-2 ms; the cache holds 16,384 files' answers, a few MB)."""
    try:
        status = path.stat()
    except OSError:
        return False
    if not stat.S_ISREG(status.st_mode):
        return False
    return _sound_only_version(str(path), status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=16_384)
def _sound_only_version(path: str, size: int, modified_ns: int) -> bool:
    return sound_only(path)  # the size and time only key the cache


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
            try:
                unchanged = path.resolve(strict=True) == path and path.stat().st_size == record.size
            except OSError:
                continue
            # checked before its streams are read: a path that became a pipe would block
            media_type = recording_media_type(path) if unchanged and path.is_file() else None
            if media_type is not None:
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


class OpenedFileResponse(FileResponse):
    """A file sent as it was when opened: its headers from the open file (``fstat``) and
    exactly that many bytes, however the file changes while it is sent.

    Starlette's ``FileResponse`` takes the size from the path, then opens the path again
    and reads to its end: a file replaced or grown in between (a frame rewritten by a
    running ``ingest``) sent more bytes than its ``Content-Length`` said, and the server
    failed the response (h11: "Too much data for declared Content-Length"). A replaced
    file stays readable through the descriptor opened here; a file cut short in place
    ends the response early, with one warning line.

    Raises:
        OSError: the file cannot be opened (the caller answers 404).
    """

    def __init__(self, path: Path, *, media_type: str, headers: dict[str, str]) -> None:
        self._file = path.open("rb")
        try:
            status = os.fstat(self._file.fileno())
            super().__init__(path, media_type=media_type, headers=headers, stat_result=status)
        except BaseException:
            self._file.close()
            raise
        self._size = status.st_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._file.close()

    @asynccontextmanager
    async def _open_file(self) -> AsyncIterator[anyio.AsyncFile[bytes]]:
        self._file.seek(0)
        yield anyio.wrap_file(self._file)  # closed by __call__

    async def _handle_simple(self, send: Send, send_header_only: bool, send_pathsend: bool) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        if send_header_only:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        async with self._open_file() as file:
            left = self._size
            while True:  # ends: each pass sends a chunk that brings left down, or the last
                chunk = await file.read(min(self.chunk_size, left)) if left else b""
                left -= len(chunk)
                more = bool(chunk) and left > 0
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                if not more:
                    break
        if left:
            logger.warning(
                "%s was cut short while being sent; the response is incomplete", self.path
            )
