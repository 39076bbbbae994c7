"""Direct links over a real local HTTP server: resume, limits, hashes, bad links."""

from __future__ import annotations

import hashlib
import logging

import pytest

from llama_index_video.errors import DownloadError
from llama_index_video.sources import moment_url, read_origin, redact
from llama_index_video.sources.download import DownloadOptions, NotMediaError, download_media
from llama_index_video.sources.origin import Origin
from tests.sources.conftest import TALK


def test_a_direct_link_is_streamed_and_recorded(site, tmp_path):
    seen = []
    path = download_media(
        f"{site.url}/media/talk.mkv", tmp_path, progress=lambda d, t: seen.append((d, t))
    )
    assert path.read_bytes() == TALK and path.suffix == ".mkv"
    origin = read_origin(path)
    assert origin.url == f"{site.url}/media/talk.mkv"
    assert origin.sha256 == hashlib.sha256(TALK).hexdigest()
    assert seen[-1] == (len(TALK), len(TALK))
    again = download_media(f"{site.url}/media/talk.mkv", tmp_path)
    assert again == path and site.ranges == [None]  # unchanged on disk: not fetched again


def test_a_dropped_connection_resumes_with_a_range_request(site, tmp_path):
    site.drops_left = 1
    path = download_media(f"{site.url}/media/talk.mkv", tmp_path)
    assert path.read_bytes() == TALK
    assert site.ranges[0] is None
    assert site.ranges[1] == f"bytes={len(TALK) // 2}-"


def test_an_interrupted_download_resumes_on_the_next_run(site, tmp_path):
    site.drops_left = 2
    options = DownloadOptions(attempts=2)
    with pytest.raises(DownloadError, match="kept dropping"):
        download_media(f"{site.url}/media/talk.mkv", tmp_path, options=options)
    assert list(tmp_path.glob("*.part"))
    path = download_media(f"{site.url}/media/talk.mkv", tmp_path, options=options)
    assert path.read_bytes() == TALK
    assert site.ranges[-1].startswith("bytes=") and not list(tmp_path.glob("*.part"))


def test_the_content_hash_in_the_link_is_checked(site, tmp_path):
    good = hashlib.sha256(TALK).hexdigest()
    assert download_media(f"{site.url}/media/talk.mkv#sha256={good}", tmp_path).is_file()
    with pytest.raises(DownloadError, match="hash mismatch"):
        download_media(f"{site.url}/media/talk.mkv?v=2#sha256={'0' * 64}", tmp_path / "b")
    assert not list((tmp_path / "b").glob("*"))


def test_the_size_limit_is_enforced(site, tmp_path):
    with pytest.raises(DownloadError, match="limit"):
        download_media(
            f"{site.url}/media/talk.mkv", tmp_path, options=DownloadOptions(max_bytes=100)
        )


@pytest.mark.parametrize(
    ("path", "error", "reason"),
    [
        ("/missing.mp4", DownloadError, "HTTP 404"),
        ("/loop", DownloadError, "redirect"),
        ("/page.html", NotMediaError, "not a media file"),
    ],
)
def test_bad_links_fail_with_one_line(site, tmp_path, path, error, reason):
    with pytest.raises(error, match=reason) as raised:
        download_media(f"{site.url}{path}", tmp_path)
    assert "\n" not in str(raised.value)


def test_credentials_and_query_never_reach_errors_or_logs(site, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    host = site.url.removeprefix("http://")
    with pytest.raises(DownloadError) as raised:
        download_media(f"http://alice:hunter2@{host}/missing.mp4?token=s3cret", tmp_path)
    for text in (str(raised.value), caplog.text):
        assert "hunter2" not in text and "s3cret" not in text and "alice" not in text


def test_moment_links_seek_on_the_site():
    youtube = Origin("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "Youtube", "dQw4w9WgXcQ")
    assert moment_url(youtube, 94.7) == "https://youtu.be/dQw4w9WgXcQ?t=94"
    assert moment_url(Origin("https://vimeo.com/76979871", "Vimeo", "76979871"), 5) == (
        "https://vimeo.com/76979871#t=5s"
    )
    assert moment_url(Origin("https://x.org/a.mp4"), 12.25) == "https://x.org/a.mp4#t=12.2"
    assert moment_url(Origin("https://x.org/page", "generic", "page"), 3) == "https://x.org/page"
    assert redact("https://u:p@x.org:8080/a.mp4?sig=1#t=3") == "https://x.org:8080/a.mp4"
