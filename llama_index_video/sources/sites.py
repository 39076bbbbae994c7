"""Video sites through yt-dlp (extra ``web``): the recording plus the site's captions.

yt-dlp downloads the video (at most 720p: enough for frames and OCR) and, when the
site has them, its subtitles or else its automatic captions as ``<id>.<lang>.vtt``
beside it, where the reader's subtitle lookup finds them and prefers them to speech
recognition. Its generic extractor also handles a plain web page with an HTML5
``<video>``. No cookies or credentials are passed or logged; yt-dlp's own error text
is reduced to its first line with links redacted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_index_video.errors import DownloadError, MissingDependencyError
from llama_index_video.sources.download import DownloadOptions, DownloadProgress
from llama_index_video.sources.origin import Origin, redact, write_origin

SUBTITLE_LANGUAGES = ["en", "en-.*", "de", "fr", "es"]
_URL = re.compile(r"https?://\S+")
_PRIVATE = re.compile(r"\b(private|sign in|log ?in|members|401|403|forbidden)\b", re.IGNORECASE)


def download_from_site(
    url: str,
    folder: Path,
    *,
    options: DownloadOptions | None = None,
    progress: DownloadProgress | None = None,
) -> Path:
    """Download the video behind a page; returns the media file (captions beside it).

    Raises:
        MissingDependencyError: yt-dlp is not installed.
        DownloadError: no video on the page, private or login-only, or the download
            failed; the message has no credentials.
    """
    options = options or DownloadOptions()
    try:
        from yt_dlp import YoutubeDL
        from yt_dlp.utils import DownloadError as YtDlpError
    except ImportError as exc:
        raise MissingDependencyError("yt-dlp", "web", "Ingesting from video sites") from exc
    shown = redact(url)
    folder.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {
        "outtmpl": str(folder / "%(extractor)s-%(id)s.%(ext)s"),
        "format": "best[height<=720]/bestvideo[height<=720]+bestaudio/best",
        "writesubtitles": True,
        "writeautomaticsub": True,
        "subtitleslangs": SUBTITLE_LANGUAGES,
        "subtitlesformat": "vtt/srt/best",
        "max_filesize": options.max_bytes,
        "socket_timeout": options.timeout,
        "retries": options.attempts,
        "continuedl": True,
        "noplaylist": True,
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "logger": _Silent(),
        "progress_hooks": [_hook(progress)],
    }
    try:
        with YoutubeDL(settings) as ydl:
            info = ydl.extract_info(url, download=True)
            if info is None:
                raise DownloadError(shown, "no video found on the page")
            media = Path(ydl.prepare_filename(info))
    except YtDlpError as exc:
        raise DownloadError(shown, _reason(str(exc))) from exc
    if not media.is_file():
        raise DownloadError(shown, "no video found on the page (or it is over the size limit)")
    extractor = str(info.get("extractor_key") or info.get("extractor") or "generic")
    # A known site's canonical page carries no secrets; any other page is redacted.
    known = extractor.lower().startswith(("youtube", "vimeo"))
    page = info.get("webpage_url") if known else None
    write_origin(
        media,
        Origin(
            url=str(page or shown),
            site=extractor,
            video_id=str(info.get("id")) if info.get("id") else None,
            size=media.stat().st_size,
            title=info.get("title"),
        ),
    )
    return media


def _reason(message: str) -> str:
    """yt-dlp's error as one line with links redacted; private videos said plainly."""
    first = message.strip().splitlines()[0] if message.strip() else "download failed"
    first = re.sub(r"^ERROR:\s*(\[[^\]]+\]\s*)?", "", first)
    # Matched without the links: a port or a video id may hold "401" or "login".
    said = _URL.sub("", first)
    first = _URL.sub(lambda m: redact(m.group(0)), first)
    if _PRIVATE.search(said):
        return f"private or needs a login ({first[:200]})"
    if "Unsupported URL" in said or "no video" in said.lower():
        return "no video found on the page"
    return first[:300]


class _Silent:
    """A yt-dlp logger that keeps quiet: errors come back as exceptions."""

    def debug(self, message: str) -> None:
        return None

    def info(self, message: str) -> None:
        return None

    def warning(self, message: str) -> None:
        return None

    def error(self, message: str) -> None:
        return None


def _hook(progress: DownloadProgress | None) -> Callable[[dict[str, Any]], None]:
    def report(status: dict[str, Any]) -> None:
        if progress is not None and status.get("status") == "downloading":
            total = status.get("total_bytes") or status.get("total_bytes_estimate") or 0
            progress(int(status.get("downloaded_bytes") or 0), int(total))

    return report
