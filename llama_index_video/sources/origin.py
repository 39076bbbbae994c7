"""Where a downloaded recording came from, kept in a sidecar beside it.

A file fetched from a link is saved as ``<name>.<ext>`` with ``<name>.origin.json``
holding the link (the page for a video site, else the media URL) and, once the
download is complete, its size and sha256. The reader reads the sidecar, so every
moment of the file carries the link and can point at the same second on the site.
Links are stored without user names, passwords or query strings, which may hold
credentials or signatures (see :func:`redact`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from llama_index_video.api_keys import scrub

SIDECAR_SUFFIX = ".origin.json"
_YOUTUBE_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")


@dataclass(frozen=True)
class Origin:
    """A downloaded file's link, and what the download delivered."""

    url: str  # the page (video sites) or the media URL, redacted
    site: str = "direct"  # "direct", or yt-dlp's extractor name ("Youtube", "generic")
    video_id: str | None = None
    size: int | None = None
    sha256: str | None = None
    title: str | None = None


def sidecar_of(media: Path) -> Path:
    return media.with_name(media.stem + SIDECAR_SUFFIX)


def write_origin(media: Path, origin: Origin) -> None:
    sidecar_of(media).write_text(json.dumps(asdict(origin), indent=2) + "\n")


def read_origin(media: Path) -> Origin | None:
    """The origin recorded beside ``media``, or None for a file that was not downloaded."""
    try:
        data = json.loads(sidecar_of(media).read_text())
        return Origin(**data)
    except (OSError, ValueError, TypeError):
        return None


def moment_url(origin: Origin, start: float) -> str:
    """A link to second ``start`` on the site: ``https://youtu.be/ID?t=94``.

    YouTube and Vimeo links seek; a direct media link seeks with a Media Fragment;
    other pages have no standard way to seek and are linked as they are.
    """
    second = max(0, int(start))
    if origin.site.lower().startswith("youtube") and _YOUTUBE_ID.match(origin.video_id or ""):
        return f"https://youtu.be/{origin.video_id}?t={second}"
    if origin.site.lower() == "vimeo" and (origin.video_id or "").isdigit():
        return f"https://vimeo.com/{origin.video_id}#t={second}s"
    if origin.site == "direct":
        return f"{origin.url}#t={start:.1f}"
    return origin.url


def redact(url: str) -> str:
    """``url`` without user info, query or fragment, and any registered API key masked
    (:func:`llama_index_video.api_keys.scrub`): safe to log, store and show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return scrub(urlunsplit((parts.scheme, host, parts.path, "", "")))
