"""The library, the transcript that follows playback and the hit timeline, in a real browser.

Times come from the narration script of ``ozone_explainer.mp4`` (``examples/media/
timeline.json``), which the example index's transcriber hears exactly.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.service.conftest import opened, running
from tests_support import ROOT

pytestmark = pytest.mark.browser

OZONE = "ozone_explainer.mp4"
OZONE_SECONDS = 80.0
UVC_AT = 29.5  # "It absorbs one hundred percent of ultraviolet C radiation."
MONTREAL_AT = 65.0  # "The Montreal Protocol of nineteen eighty seven banned these chemicals."
MARKUP_NAME = "<img src=x onerror=window.__xss=1>.mkv"
NEAR = "Math.abs(v.currentTime - arg) < 1 && !v.seeking"  # the video is at `arg` seconds

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
Page = sync_api.Page


@pytest.fixture(scope="module")
def markup_url(tmp_path_factory, embed_model) -> Iterator[str]:
    """The service over an index of one file whose name is markup."""
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.service.app import create_app

    folder = tmp_path_factory.mktemp("markup")
    media = folder / "media_in"
    media.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "speech" / "subtitled.mkv", media / MARKUP_NAME)
    path = folder / "index"
    reader = VideoReader(media_dir=path / "media", frames=None, ocr="off")
    index = VideoIndex(path, embed_model=embed_model, reader=reader)
    assert index.ingest([media]).ok
    with running(create_app(index)) as url:
        yield url
    index.close()


def _video(page: Page, condition: str, arg: float | None = None) -> None:
    """Wait until ``condition`` holds of the video ``v`` (and ``arg``)."""
    page.wait_for_function(
        f"arg => {{ const v = document.getElementById('video'); return {condition}; }}",
        arg=arg,
        timeout=20_000,
    )


def _open(page: Page, name: str) -> sync_api.Locator:
    """Open a recording from the library; returns its transcript lines once loaded."""
    page.locator(f"#library button.source[data-source$='{name}']").click()
    lines = page.locator("#transcript button.line")
    lines.first.wait_for()
    _video(page, "!v.hidden && v.readyState >= 1 && !v.seeking")
    page.evaluate("document.getElementById('video').pause()")
    return lines


def _at(page: Page, seconds: float) -> None:
    """Move the paused video to ``seconds``, as dragging its slider does."""
    page.evaluate(
        "s => { const v = document.getElementById('video'); v.pause(); v.currentTime = s; }",
        seconds,
    )


def test_the_library_lists_every_example_source(page, timeline):
    sources = page.locator("#library .source")
    sources.first.wait_for()
    assert sorted(sources.locator(".name").all_inner_texts()) == sorted(timeline)
    ozone = page.locator(f"#library button.source[data-source$='{OZONE}']")
    meta = ozone.locator(".meta").inner_text()
    assert "indexed" in meta and "1:20" in meta and "transcript" in meta
    # A text document is listed but has nothing to play.
    handbook = page.locator("#library .source", has_text="handbook.md")
    assert handbook.evaluate("e => e.tagName") == "DIV"


def test_the_transcript_follows_playback_and_a_line_seeks(page):
    lines = _open(page, OZONE)
    source = page.locator(f"#library button.source[data-source$='{OZONE}']")
    expected = page.request.get(
        "/api/transcript", params={"source": source.get_attribute("data-source")}
    ).json()
    assert lines.count() == len(expected)
    assert lines.first.locator(".text").inner_text() == expected[0]["text"]
    current = page.locator("#transcript button.line[aria-current]")

    _at(page, UVC_AT + 0.5)
    page.wait_for_function(
        "() => (document.querySelector('#transcript [aria-current] .text') || {})"
        ".textContent?.includes('ultraviolet C')"
    )
    start = float(current.get_attribute("data-start"))
    assert start <= UVC_AT + 0.5 and abs(start - UVC_AT) < 8  # a unit holds a few sentences
    assert current.count() == 1

    _at(page, 0.2)  # before the first word: nothing is current
    page.wait_for_function("() => !document.querySelector('#transcript [aria-current]')")

    montreal = page.locator("#transcript button.line", has_text="Montreal Protocol")
    target = float(montreal.get_attribute("data-start"))
    assert abs(target - MONTREAL_AT) < 8
    montreal.click()
    _video(page, NEAR, target)
    page.wait_for_function(
        "() => document.querySelector('#transcript [aria-current]')?.textContent"
        ".includes('Montreal')"
    )


def test_keyboard_tab_reaches_the_transcript_and_enter_seeks(page):
    lines = _open(page, OZONE)
    _at(page, 0.2)
    page.locator(".skip-link").focus()
    for _ in range(40):  # the video's controls, then the transcript's one stop
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('line')"):
            break
    else:
        raise AssertionError("Tab never reaches the transcript")
    assert lines.first.evaluate("line => line === document.activeElement")
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    focused = page.evaluate("document.activeElement.dataset.start")
    assert focused == lines.nth(3).get_attribute("data-start")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    _video(page, NEAR, float(focused))


def test_hits_of_the_current_search_are_marked_under_the_player(page):
    page.get_by_label("Search for a moment").fill("ultraviolet radiation absorbed by ozone")
    page.keyboard.press("Enter")
    cards = page.locator(f"#results button.card[data-source$='{OZONE}']")
    cards.first.wait_for()
    starts = sorted(float(cards.nth(i).get_attribute("data-start")) for i in range(cards.count()))
    _open(page, OZONE)
    markers = page.locator("#timeline button.marker")
    markers.first.wait_for()
    assert markers.count() == len(starts)  # this recording's hits, not the other files'
    track = page.locator("#timeline").bounding_box()
    duration = page.evaluate("document.getElementById('video').duration")
    assert abs(duration - OZONE_SECONDS) < 0.5
    for index, start in enumerate(starts):
        marker = markers.nth(index)
        assert float(marker.get_attribute("data-start")) == start
        assert marker.get_attribute("aria-label").startswith(f"Hit {index + 1} at ")
        box = marker.bounding_box()
        centre = (box["x"] + box["width"] / 2 - track["x"]) / track["width"]
        assert abs(centre - start / duration) < 0.02, (index, centre, start)
    assert "in this recording" in page.locator("#timeline-caption").inner_text()
    last = markers.nth(len(starts) - 1)
    last.focus()
    page.keyboard.press("Enter")
    _video(page, NEAR, starts[-1])


def test_a_source_named_like_markup_is_shown_as_text(browser, markup_url):
    with opened(browser, markup_url) as page:
        name = page.locator("#library .source .name")
        name.first.wait_for()
        assert name.inner_text() == MARKUP_NAME
        page.locator("#library button.source").click()
        page.locator("#transcript button.line").first.wait_for()
        assert page.locator("#now-playing").inner_text() == f"Playing {MARKUP_NAME}"
        assert page.locator("#library img, #now-playing img").count() == 0
        assert page.evaluate("window.__xss") is None


def test_narrow_screen_with_the_library_open_has_no_sideways_scrolling(browser, service_url):
    with opened(browser, service_url, viewport={"width": 360, "height": 740}) as narrow:
        narrow.get_by_label("Search for a moment").fill("ozone layer")
        narrow.keyboard.press("Enter")
        narrow.locator("#results button.card").first.wait_for()
        _open(narrow, OZONE)
        narrow.locator("#timeline button.marker").first.wait_for()
        assert narrow.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


def test_the_open_transcript_downloads_as_subtitles(page, tmp_path):
    import srt

    _open(page, OZONE)
    link = page.locator("#transcript-downloads a[data-format='srt']")
    assert link.is_visible()
    with page.expect_download() as waiting:
        link.click()
    download = waiting.value
    assert download.suggested_filename == "ozone_explainer.srt"
    download.save_as(tmp_path / "ozone.srt")
    cues = list(srt.parse((tmp_path / "ozone.srt").read_text(encoding="utf-8")))
    uvc = next(c for c in cues if "ultraviolet C" in c.content)
    assert uvc.start.total_seconds() <= UVC_AT <= uvc.end.total_seconds()  # a unit holds it
