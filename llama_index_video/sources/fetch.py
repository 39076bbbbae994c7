"""Fetching a recording behind an http(s) link: directly, or from a video site by yt-dlp."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from llama_index_video.sources.download import (
    DownloadOptions,
    DownloadProgress,
    NotMediaError,
    download_media,
)

# Hosts whose pages are never media files: go straight to yt-dlp.
SITE_HOSTS = ("youtube.com", "youtu.be", "vimeo.com", "dailymotion.com", "twitch.tv")


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
