"""Direct media links: streamed to disk, resumable, size-limited and hash-checked.

A link is saved under a name derived from it (so the same link lands in the same
file), first as ``<name>.part``. An interrupted transfer (dropped connection, a
killed run) resumes from the bytes already on disk with an HTTP ``Range`` request;
a server that ignores it sends the whole file again, which replaces the part. The
finished file is checked against the sha256 given in the link's ``#sha256=``
fragment or the server's ``Content-Digest``/``Repr-Digest``/``Digest`` header, when
there is one, and its hash is recorded in the origin sidecar; a link downloaded
before is not fetched again while the file on disk still has that hash.

Every retry loop is bounded: at most ``attempts`` connections per link, and each
must deliver bytes or end the download.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import logging
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from llama_index_video.errors import DownloadError
from llama_index_video.sources.origin import Origin, read_origin, redact, write_origin

logger = logging.getLogger(__name__)

DownloadProgress = Callable[[int, int], None]
"""Called as ``progress(bytes_done, bytes_total)`` (total 0 when unknown)."""

MEDIA_TYPES = ("video/", "audio/", "application/octet-stream", "application/ogg")
_BLOCK = 1 << 16
_HEX_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class NotMediaError(DownloadError):
    """The link answered with a web page (or other non-media content), not a recording."""


@dataclass(frozen=True, kw_only=True)
class DownloadOptions:
    """How links are fetched.

    Attributes:
        max_bytes: Refuse a download larger than this.
        attempts: Connections per link before giving up (resuming each time).
        timeout: Seconds without data before a connection counts as dropped.
    """

    max_bytes: int = 4 << 30
    attempts: int = 4
    timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {self.max_bytes}")
        if not 1 <= self.attempts <= 20:
            raise ValueError(f"attempts must be 1-20, got {self.attempts}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {self.timeout}")


def download_media(
    url: str,
    folder: Path,
    *,
    options: DownloadOptions | None = None,
    progress: DownloadProgress | None = None,
) -> Path:
    """Download the media at ``url`` into ``folder``; returns the file.

    Raises:
        NotMediaError: the link serves a web page or other non-media content.
        DownloadError: HTTP error, too many redirects, over the size limit, a hash
            mismatch, or the connection kept dropping; the message shows the link
            without credentials or query.
    """
    options = options or DownloadOptions()
    shown = redact(url)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name_for(url)
    recorded = read_origin(target)
    if target.is_file() and recorded and recorded.sha256 == _sha256(target):
        return target  # downloaded before and unchanged on disk
    part = target.with_name(target.name + ".part")
    expected = _fragment_sha256(url)
    for _ in range(options.attempts):
        try:
            total, header_sha = _transfer(url, part, options, progress)
            break
        except _Dropped as dropped:
            size = part.stat().st_size if part.is_file() else 0
            logger.info("%s: connection dropped (%s); resuming at %d bytes", shown, dropped, size)
    else:
        raise DownloadError(
            shown,
            f"the connection kept dropping ({options.attempts} attempts); run again to resume",
        )
    digest = _sha256(part)
    want = expected or header_sha
    if want and want != digest:
        part.unlink(missing_ok=True)
        raise DownloadError(
            shown, f"content hash mismatch (expected {want[:12]}…, got {digest[:12]}…)"
        )
    part.replace(target)
    write_origin(target, Origin(url=shown, size=total, sha256=digest))
    return target


def file_name_for(url: str) -> str:
    """A stable, safe file name for a link: its own name plus a short hash of the link."""
    path = PurePosixPath(urlsplit(url).path)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", path.stem)[:60] or "download"
    suffix = path.suffix.lower() if re.fullmatch(r"\.[a-z0-9]{2,5}", path.suffix.lower()) else ""
    tag = hashlib.sha256(redact(url).encode()).hexdigest()[:10]
    return f"{stem}-{tag}{suffix or '.media'}"


class _Dropped(Exception):
    """The connection ended before the file did."""


def _transfer(
    url: str, part: Path, options: DownloadOptions, progress: DownloadProgress | None
) -> tuple[int, str | None]:
    """One connection, resuming into ``part``: the file's size and the server's sha256.

    Raises:
        _Dropped: the connection ended before the file did (resume with another).
    """
    shown = redact(url)
    have = part.stat().st_size if part.is_file() else 0
    request = urllib.request.Request(
        url.split("#", 1)[0], headers={"User-Agent": "llama-index-video"}
    )
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=options.timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left to send: the part is whole
            return have, None
        if exc.code in (301, 302, 303, 307, 308):
            raise DownloadError(shown, "too many redirects (a redirect loop?)") from exc
        raise DownloadError(shown, f"HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise DownloadError(shown, f"cannot connect ({exc.reason})") from exc
    except (TimeoutError, OSError) as exc:
        raise _Dropped(type(exc).__name__) from exc
    with response:
        kind = response.headers.get_content_type()
        if not kind.startswith(MEDIA_TYPES):
            raise NotMediaError(shown, f"is not a media file (the server sent {kind})")
        resumed = response.status == 206
        length = int(response.headers.get("Content-Length") or 0)
        total = (have if resumed else 0) + length
        if total > options.max_bytes:
            raise DownloadError(
                shown, f"is {total:,} bytes, over the limit of {options.max_bytes:,}"
            )
        header_sha = _header_sha256(response.headers, whole=not resumed)
        mode = "ab" if resumed else "wb"
        done = have if resumed else 0
        with part.open(mode) as out:
            try:
                while block := response.read(_BLOCK):
                    out.write(block)
                    done += len(block)
                    if done > options.max_bytes:
                        raise DownloadError(
                            shown, f"exceeds the limit of {options.max_bytes:,} bytes"
                        )
                    if progress:
                        progress(done, total)
            except (http.client.IncompleteRead, TimeoutError, OSError) as exc:
                raise _Dropped(type(exc).__name__) from exc
        if length and done < total:
            raise _Dropped(f"{done} of {total} bytes")
        return done, header_sha


def _fragment_sha256(url: str) -> str | None:
    fragment = urlsplit(url).fragment
    if fragment.startswith("sha256="):
        value = fragment.removeprefix("sha256=").lower()
        if _HEX_SHA256.match(value):
            return value
    return None


def _header_sha256(headers: http.client.HTTPMessage, *, whole: bool) -> str | None:
    """The file's sha256 from ``Repr-Digest`` (RFC 9530) or ``Digest`` (RFC 3230), or
    ``Content-Digest`` when the response is the whole file (``whole``)."""
    names = ("Repr-Digest", "Digest", "Content-Digest") if whole else ("Repr-Digest", "Digest")
    for name in names:
        value = headers.get(name) or ""
        match = re.search(r"sha-256=:?([A-Za-z0-9+/=]+):?", value, re.IGNORECASE)
        if match:
            try:
                return base64.b64decode(match.group(1)).hex()
            except ValueError:
                return None
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
