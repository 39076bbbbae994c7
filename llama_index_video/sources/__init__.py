"""Recordings from links: direct media URLs, and video sites through yt-dlp.

:func:`fetch_link` (:mod:`.fetch`) takes any http(s) link: a media file is downloaded directly
(:mod:`.download`); a web page or a known video site goes to yt-dlp (:mod:`.sites`).
The file lands in the index's media folder with an origin sidecar (:mod:`.origin`)
that lets every moment link back to the same second on the site.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.sources.download import DownloadOptions
    from llama_index_video.sources.fetch import fetch_link, is_link
    from llama_index_video.sources.origin import Origin, moment_url, read_origin, redact

_EXPORTS: dict[str, str] = {
    "DownloadOptions": "llama_index_video.sources.download",
    "Origin": "llama_index_video.sources.origin",
    "moment_url": "llama_index_video.sources.origin",
    "read_origin": "llama_index_video.sources.origin",
    "redact": "llama_index_video.sources.origin",
    "fetch_link": "llama_index_video.sources.fetch",
    "is_link": "llama_index_video.sources.fetch",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
