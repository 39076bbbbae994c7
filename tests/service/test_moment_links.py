"""The page's moment playing, in a real browser: its deep link in the address bar, that link
opened elsewhere, "Copy link" (clipboard, else a text field) and "Download this moment"."""

from __future__ import annotations

import json
import shutil
from urllib.parse import parse_qs, urlsplit

import av
import pytest

from llama_index_video.agents import VideoToolSpec
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.service.app import create_app
from llama_index_video.sources.origin import Origin, write_origin
from tests.service.conftest import opened
from tests.service.test_page import _playing_from, _uvc_card
from tests_support import OZONE, OZONE_SRT, running

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")

NO_CLIPBOARD = "Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });"


def _play_the_uvc_hit(page: sync_api.Page) -> tuple[sync_api.Locator, float]:
    page.get_by_label("Search for a moment").fill("ultraviolet C radiation absorbed")
    page.keyboard.press("Enter")
    card, start = _uvc_card(page.locator("#results"))
    card.click()
    _playing_from(page, start)
    return card, start


def _linked(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).fragment).items()}


def test_playing_a_hit_puts_its_deep_link_in_the_address_bar_and_the_link_plays_it(
    page, browser, service_url
):
    card, start = _play_the_uvc_hit(page)
    link = _linked(page.url)
    assert link["source"] == "ozone_explainer.mp4"
    assert abs(float(link["t"]) - start) < 0.01
    assert abs(float(link["end"]) - float(card.get_attribute("data-end"))) < 0.01
    with opened(browser, service_url) as fresh:
        fresh.goto(page.url)
        assert abs(_playing_from(fresh, start) - start) < 1
        assert fresh.locator("#now-playing").inner_text() == "Playing ozone_explainer.mp4"


def test_a_transcript_line_moves_the_link_to_its_second(page):
    _play_the_uvc_hit(page)
    line = page.locator("#transcript button.line").nth(1)
    line.wait_for()
    line.click()
    second = float(line.get_attribute("data-start"))
    assert abs(_playing_from(page, second) - second) < 1
    assert abs(float(_linked(page.url)["t"]) - second) < 0.01


def test_copy_link_puts_the_address_bar_in_the_clipboard(browser, service_url):
    grant = {"permissions": ["clipboard-read", "clipboard-write"]}
    with opened(browser, service_url, **grant) as page:
        _play_the_uvc_hit(page)
        page.get_by_role("button", name="Copy link").click()
        page.wait_for_function("() => document.getElementById('copy-status').textContent")
        assert page.locator("#copy-status").inner_text() == "Link copied."
        assert page.evaluate("navigator.clipboard.readText()") == page.url
        assert page.locator("#link-fallback").is_hidden()


def test_without_a_clipboard_copy_link_shows_the_link_selected_in_a_field(page):
    page.add_init_script(NO_CLIPBOARD)  # as over plain http from another machine
    page.reload()
    _play_the_uvc_hit(page)
    page.get_by_role("button", name="Copy link").click()
    field = page.get_by_label("Link to this moment")
    field.wait_for()
    assert field.input_value() == page.url and "#source=ozone_explainer.mp4" in page.url
    selected = "() => { const f = document.activeElement;"
    selected += " return f.id === 'link-field' && f.selectionEnd - f.selectionStart; }"
    assert page.evaluate(selected) == len(page.url)


def test_download_this_moment_is_a_playable_clip_of_the_playing_span(page):
    card, start = _play_the_uvc_hit(page)
    span = float(card.get_attribute("data-end")) - start
    with page.expect_download() as downloading:
        page.locator("#moment-tools").get_by_role("link", name="Download this moment").click()
    download = downloading.value
    assert download.suggested_filename.startswith("ozone_explainer_")
    with av.open(download.path()) as clip:
        video = clip.streams.video[0]
        assert abs(float(video.duration * video.time_base) - span) < 1.1  # from a keyframe
        assert next(clip.decode(video=0)).width > 0  # it plays


def test_a_recording_from_the_library_downloads_30_seconds_from_its_start(page):
    page.locator("#library button.source[data-source$='ozone_explainer.mp4']").click()
    _playing_from(page, 0)
    assert _linked(page.url) == {"source": "ozone_explainer.mp4", "t": "0"}
    href = page.locator("#download-moment").get_attribute("href")
    assert parse_qs(urlsplit(href).query)["start"] == ["0"]
    assert parse_qs(urlsplit(href).query)["end"] == ["30"]


def test_a_link_may_give_the_second_as_m_ss(page):
    page.goto("/#source=ozone_explainer.mp4&t=0:29")
    assert abs(_playing_from(page, 29) - 29) < 1
    assert _linked(page.url) == {"source": "ozone_explainer.mp4", "t": "29"}


def test_a_downloaded_recording_plays_from_the_link_an_agent_gives(browser, tmp_path, embed_model):
    """A download is listed by its link, but hits (and the agents' page links) name its
    file: the page found no recording by that name."""
    folder = tmp_path / "idx"
    downloads = folder / "media" / "downloads"
    downloads.mkdir(parents=True)
    video = downloads / OZONE.name
    shutil.copy(OZONE, video)
    shutil.copy(OZONE_SRT, downloads)
    write_origin(video, Origin(url="https://example.org/ozone.mp4"))
    reader = VideoReader(media_dir=folder / "media", ocr="off")
    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    try:
        assert index.ingest([video]).ok
        with running(create_app(index)) as url:
            tools = VideoToolSpec(index, page_url=url)
            (moment,) = json.loads(tools.search_moments("ultraviolet C radiation", top_k=1))[
                "moments"
            ]
            assert moment["source"] == str(video.resolve())
            with opened(browser, url) as page:
                page.goto(moment["url"])
                assert abs(_playing_from(page, moment["start"]) - moment["start"]) < 1
    finally:
        index.close()
