"""Pages through yt-dlp's generic extractor, and links in a real ingest (local server)."""

from __future__ import annotations

import pytest

from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.errors import DownloadError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.sources import read_origin
from llama_index_video.sources.sites import download_from_site
from tests.sources.conftest import CLIP


def test_a_page_with_an_html5_video_is_downloaded_with_its_captions(site, tmp_path):
    media = download_from_site(f"{site.url}/page.html", tmp_path)
    assert media.read_bytes() == CLIP
    captions = list(tmp_path.glob(f"{media.stem}.en*.vtt"))
    assert captions and "penguins" in captions[0].read_text()
    origin = read_origin(media)
    assert origin.site != "direct" and origin.url == f"{site.url}/page.html"


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/empty.html", "no video found"), ("/private.html", "private or needs a login")],
)
def test_pages_without_a_reachable_video_fail_with_one_line(site, tmp_path, path, reason):
    with pytest.raises(DownloadError, match=reason) as raised:
        download_from_site(f"{site.url}{path}", tmp_path)
    assert "\n" not in str(raised.value)


@pytest.fixture
def index(tmp_path, embed_model):
    path = tmp_path / "index"
    reader = VideoReader(media_dir=path / "media", frames=None, ocr="off")
    opened = VideoIndex(path, embed_model=embed_model, reader=reader)
    yield opened
    opened.close()


def test_links_ingest_in_order_and_a_bad_one_stops_nothing(site, index, tmp_path):
    inputs = [f"{site.url}/missing.mp4", f"{site.url}/page.html", f"{site.url}/media/talk.mkv"]
    report = index.ingest(inputs)
    assert [(f.link, f.outcome) for f in report.files] == [
        (inputs[0], "failed"),
        (inputs[1], "indexed"),
        (inputs[2], "indexed"),
    ]
    assert "HTTP 404" in report.files[0].reason
    assert "transcript from subtitles" in report.files[1].reason  # the site's captions
    rows = index.vector_store._collection.get(include=["metadatas"])["metadatas"]
    page = [m for m in rows if m.get(schema.ORIGIN_URL) == inputs[1]]
    assert page and all(m[schema.SITE_URL] == inputs[1] for m in page)
    direct = [m for m in rows if m.get(schema.ORIGIN_URL) == inputs[2]]
    assert direct and all(m[schema.SITE_URL].startswith(f"{inputs[2]}#t=") for m in direct)
    hits = index.search("penguins")
    assert hits and hits[0].site_url == inputs[1] and hits[0].source.endswith(".mp4")


def test_cli_ingest_names_links_and_goes_on(site, tmp_path, capsys):
    code = main(
        ["ingest", f"{site.url}/loop", f"{site.url}/media/talk.mkv", "--index",
         str(tmp_path / "index"), "--quiet", "--no-frames", "--ocr", "off"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1  # one input failed
    assert f"failed   {site.url}/loop" in out and "redirect" in out
    assert f"indexed  {site.url}/media/talk.mkv" in out
