"""Pages through yt-dlp's generic extractor, and links in a real ingest (local server)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.errors import DownloadError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.service.app import create_app
from llama_index_video.sources import read_origin
from llama_index_video.sources.download import file_name_for
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
    [
        ("/empty.html", "no video found"),
        ("/members/login-401/empty.html", "no video found"),  # the words are in the link only
        ("/private.html", "private or needs a login"),
    ],
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


def test_a_download_follows_its_index_folder_when_the_folder_moves(
    site, tmp_path, capsys, embed_model
):
    """Downloads live in ``<index>/media/downloads``, recorded by their absolute path: after
    the folder moved they are listed, kept by ``--prune``, found and served from there."""
    link, folder = f"{site.url}/media/lecture.mkv", tmp_path / "index"
    assert main(["ingest", link, "--index", str(folder), "--quiet", "--ocr", "off"]) == 0
    ingested = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith(f"indexed  {link}, ")
        and line.endswith("(transcript from subtitles (embedded subtitle stream 2))")
        for line in ingested
    ), ingested
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(folder, moved)
    downloaded = str((moved / "media" / "downloads" / file_name_for(link)).resolve())

    assert main(["list", "--json", "--index", str(moved)]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert (entry["source"], entry["path"], entry["status"]) == (link, downloaded, "indexed")

    assert main(["search", "ozone molecule", "--index", str(moved), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and all(hit["source_path"] == downloaded for hit in hits)
    assert all(hit["url"].startswith(downloaded + "#t=") for hit in hits)
    frames = [hit["frame_path"] for hit in hits if hit["frame_path"]]
    assert frames and all(Path(f).is_file() and Path(f).is_relative_to(moved) for f in frames)

    index = VideoIndex(moved, embed_model=embed_model)
    try:
        with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
            [listed] = client.get("/api/library").json()
            assert listed["media_url"] and listed["media_type"] == "video/x-matroska"
            served = client.get(listed["media_url"])
            assert served.status_code == 200 and served.content == Path(downloaded).read_bytes()
            [found] = client.get("/api/search", params={"q": "ozone molecule"}).json()[:1]
            assert found["media_url"] == listed["media_url"]
    finally:
        index.close()

    again = ["ingest", "--prune", link, "--index", str(moved), "--quiet", "--ocr", "off"]
    assert main(again) == 0
    out = capsys.readouterr().out
    assert "removed" not in out and f"skipped  {link}" in out  # its rows were kept
    assert main(["list", "--json", "--index", str(moved)]) == 0
    assert [e["path"] for e in json.loads(capsys.readouterr().out)] == [downloaded]
