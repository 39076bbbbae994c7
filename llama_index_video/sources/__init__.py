"""Recordings from links: direct media URLs, and video sites through yt-dlp.

:func:`fetch_link` takes any http(s) link: a media file is downloaded directly
(:mod:`.download`); a web page or a known video site goes to yt-dlp (:mod:`.sites`).
The file lands in the index's media folder with an origin sidecar (:mod:`.origin`)
that lets every moment link back to the same second on the site.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from llama_index_video.sources.download import (
    DownloadOptions,
    DownloadProgress,
    NotMediaError,
    download_media,
)
from llama_index_video.sources.origin import Origin, moment_url, read_origin, redact

# Hosts whose pages are never media files: go straight to yt-dlp.
SITE_HOSTS = ("youtube.com", "youtu.be", "vimeo.com", "dailymotion.com", "twitch.tv")

__all__ = [
    "DownloadOptions",
    "Origin",
    "fetch_link",
    "is_link",
    "moment_url",
    "read_origin",
    "redact",
]


def is_link(text: str) -> bool:
    """Whether an input names an http(s) link rather than a local path."""
    return urlsplit(text).scheme in ("http", "https") and bool(urlsplit(text).netloc)


def fetch_link(
    url: str,
    folder: Path,
    *,
    options: DownloadOptions | None = None,
    progress: DownloadProgress | None = None,
) -> Path:
    """Download the recording behind ``url`` into ``folder`` and return its path.

    Raises:
        DownloadError: the link cannot be fetched (the message names it, redacted).
        MissingDependencyError: the link is a web page and yt-dlp is not installed.
    """
    from llama_index_video.sources.sites import download_from_site

    host = (urlsplit(url).hostname or "").lower()
    if any(host == site or host.endswith("." + site) for site in SITE_HOSTS):
        return download_from_site(url, folder, options=options, progress=progress)
    try:
        return download_media(url, folder, options=options, progress=progress)
    except NotMediaError:
        return download_from_site(url, folder, options=options, progress=progress)
