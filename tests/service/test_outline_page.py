"""The chapters and the summary beside the player, in a real browser and through the API.

The recording is the constructed 16-minute meeting of four known topics, four minutes
each (:mod:`tests.chapters.meeting_script`: silence with a sidecar subtitle file), so
every chapter start and every cited moment has a known time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llama_index_video.service.app import create_app
from tests.chapters.meeting_script import SAID, TOPIC_SECONDS, TOPICS, cues
from tests.chapters.test_chapters_ingest import _index
from tests.service.conftest import opened, running

NEAR = "Math.abs(a.currentTime - arg) < 1 && !a.seeking"  # the audio is at `arg` seconds
TOLERANCE = 30.0


@pytest.fixture(scope="module")
def meeting_index(meeting_copy, embed_model) -> Iterator[Any]:
    index = _index(meeting_copy[1], embed_model)
    yield index
    index.close()


@pytest.fixture(scope="module")
def meeting_url(meeting_index) -> Iterator[str]:
    with running(create_app(meeting_index)) as url:
        yield url


@pytest.fixture
def page(browser, meeting_url) -> Iterator[Any]:
    with opened(browser, meeting_url) as fresh:
        fresh.locator("#library button.source").first.click()
        fresh.locator("#chapters button.chapter").first.wait_for()
        _audio(fresh, "!a.hidden && a.readyState >= 1 && !a.seeking")
        fresh.evaluate("document.getElementById('audio').pause()")
        yield fresh


def _audio(page: Any, condition: str, arg: float | None = None) -> None:
    """Wait until ``condition`` holds of the audio player ``a`` (and ``arg``)."""
    page.wait_for_function(
        f"arg => {{ const a = document.getElementById('audio'); return {condition}; }}",
        arg=arg,
        timeout=20_000,
    )


@pytest.mark.browser
def test_the_chapters_are_listed_beside_the_player_and_one_plays_from_its_start(page):
    chapters = page.locator("#chapters button.chapter")
    assert chapters.count() == len(TOPICS)
    starts = [float(chapters.nth(i).get_attribute("data-start")) for i in range(len(TOPICS))]
    for number, start in enumerate(starts):
        assert abs(start - number * TOPIC_SECONDS) <= TOLERANCE
    titles = chapters.locator(".text").all_inner_texts()
    assert "battery" in titles[1].lower()
    assert chapters.nth(2).locator(".time").inner_text() == _clock(starts[2])
    chapters.nth(2).click()
    _audio(page, NEAR, starts[2])
    current = page.locator("#chapters button.chapter[aria-current]")
    assert current.count() == 1
    assert float(current.get_attribute("data-start")) == starts[2]


@pytest.mark.browser
def test_the_summary_panel_cites_each_decision_and_its_link_plays_it(page):
    decisions = page.locator("#summary ul[data-section='decisions'] li")
    assert decisions.count() >= 2
    times = {text: start for start, _, text, _ in cues()}
    opening = next(opening for kind, opening in SAID if kind == "decisions")
    line = decisions.filter(has_text=opening)
    said_at = next(start for text, start in times.items() if text.startswith(opening))
    link = line.locator("a.citation")
    assert link.inner_text().startswith("[meeting.wav ")
    assert "t=" in (link.get_attribute("href") or "")
    link.click()
    _audio(page, NEAR, said_at)
    assert "Extractive" in page.locator("#summary-panel").inner_text()
    items = page.locator("#summary ul[data-section='action_items'] li")
    assert any("by Friday" in text for text in items.all_inner_texts())


@pytest.mark.browser
def test_a_recording_too_short_to_chapter_shows_no_outline(browser, service_url):
    with opened(browser, service_url) as short:
        ozone = short.locator("#library button.source[data-source$='ozone_explainer.mp4']")
        with (
            short.expect_response(lambda r: "/api/chapters?" in r.url) as chapters,
            short.expect_response(lambda r: "/api/summary?" in r.url),
        ):
            ozone.click()
        assert chapters.value.json() == []
        short.locator("#transcript button.line").first.wait_for()
        assert short.locator("#chapters-panel").is_hidden()
        assert short.locator("#outline-status").inner_text() == ""


def test_the_api_gives_chapters_and_the_extractive_summary(meeting_index):
    from fastapi.testclient import TestClient

    with TestClient(create_app(meeting_index), base_url="http://127.0.0.1") as client:
        source = client.get("/api/library").json()[0]["source"]
        chapters = client.get("/api/chapters", params={"source": source}).json()
        assert [round(c["start"] / TOPIC_SECONDS) for c in chapters] == [0, 1, 2, 3]
        summary = client.get("/api/summary", params={"source": source}).json()
        assert summary["extractive"] is True
        assert len(summary["overview"]) == len(TOPICS)
        for route in ("/api/chapters", "/api/summary"):
            missing = client.get(route, params={"source": "nowhere.mp4"})
            assert missing.status_code == 404
            assert "nowhere.mp4" in missing.json()["detail"]


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"
