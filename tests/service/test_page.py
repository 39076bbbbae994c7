"""The page in a real browser: ask, see the moment, click it, land on the cited second."""

from __future__ import annotations

import httpx
import pytest

from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.service import ask_with
from llama_index_video.service.app import create_app
from tests.fakes.anthropic_server import text_reply
from tests.service.conftest import opened
from tests_support import running

pytestmark = pytest.mark.browser

UVC_SENTENCE_AT = 29.5  # "It absorbs one hundred percent of ultraviolet C radiation."

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")


def _uvc_card(list_locator: sync_api.Locator) -> tuple[sync_api.Locator, float]:
    """The card of ozone_explainer.mp4 whose span holds the UV-C sentence, and its start."""
    cards = list_locator.locator("button.card[data-source$='ozone_explainer.mp4']")
    cards.first.wait_for()
    for index in range(cards.count()):
        card = cards.nth(index)
        start, end = float(card.get_attribute("data-start")), float(card.get_attribute("data-end"))
        if start <= UVC_SENTENCE_AT <= end:
            return card, start
    raise AssertionError("no card of ozone_explainer.mp4 covers the UV-C sentence")


def _playing_from(page: sync_api.Page, start: float) -> float:
    page.wait_for_function(
        "start => { const v = document.getElementById('video');"
        " return !v.hidden && v.readyState >= 1 && !v.seeking"
        " && Math.abs(v.currentTime - start) < 1; }",
        arg=start,
        timeout=20_000,
    )
    return page.evaluate("document.getElementById('video').currentTime")


def test_ask_then_click_the_cited_moment_plays_it_from_that_second(page):
    page.get_by_label("Ask a question").fill("how much ultraviolet C radiation is absorbed")
    page.get_by_role("button", name="Ask").click()
    card, start = _uvc_card(page.locator("#citations"))
    assert page.locator("#answer-text").inner_text().strip()
    assert "[ozone_explainer.mp4 " in card.inner_text()
    assert card.locator("img").get_attribute("src").startswith("/frames/")
    card.click()
    assert abs(_playing_from(page, start) - start) < 1
    assert page.locator("#now-playing").inner_text().startswith("Playing [ozone_explainer.mp4")


WATCH_ANSWER = """() => {
  window.shown = [];
  const text = document.getElementById("answer-text");
  new MutationObserver(() => window.shown.push([performance.now(), text.textContent]))
    .observe(text, { childList: true, characterData: true, subtree: true });
}"""


def test_the_answer_appears_as_the_model_writes_it_and_ends_as_ask_gives_it(
    browser, example_index, fake_anthropic
):
    question = "how much ultraviolet C radiation is absorbed"
    hit = example_index.search(question)[0]
    chunks = ("All of it: ", "one hundred ", f"percent {hit.label}.")
    fake_anthropic.enqueue(text_reply(*chunks, chunk_delay=1.0), text_reply(*chunks))
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, timeout=10.0
    )
    with running(create_app(example_index, answer=ask_with(claude))) as url:
        with opened(browser, url) as page:
            asked: list[str] = []
            page.on("request", lambda r: asked.append(r.url) if "/api/" in r.url else None)
            page.evaluate(WATCH_ANSWER)
            page.get_by_label("Ask a question").fill(question)
            page.get_by_role("button", name="Ask").click()
            page.wait_for_function(
                "() => document.getElementById('status').textContent === 'Answered.'",
                timeout=30_000,
            )
            shown = page.evaluate("window.shown")
            final = page.locator("#answer-text").text_content()
            cited = page.locator("#citations .card .label").all_text_contents()
        whole = httpx.post(f"{url}/api/ask", json={"question": question}, timeout=30).json()
    assert f"{url}/api/ask/stream" in asked and f"{url}/api/ask" not in asked
    written = [(at, text) for at, text in shown if text]
    partial = [at for at, text in written if text == "All of it: one hundred "]
    assert partial, written  # shown while the model was still writing
    assert written[-1][0] - partial[0] > 0.3  # well before the last words came
    assert final == whole["answer"] and whole["model"]
    assert cited == [c["label"] for c in whole["citations"]] == [hit.label]


def test_behind_a_token_the_page_loads_its_modules_and_searches(browser, example_index):
    token = "page-token-for-tests_0123"
    with running(create_app(example_index, token=token)) as url, opened(browser, url) as page:
        loaded: list[tuple[str, int]] = []
        page.on("response", lambda r: loaded.append((r.url, r.status)))
        page.goto(f"/?token={token}")  # sets the cookie, then back to /
        page.get_by_label("Search for a moment").fill("ozone hole")
        page.keyboard.press("Enter")
        page.locator("#results button.card").first.wait_for()
        page.locator("#library .source").first.wait_for()
    scripts = {u.rsplit("/", 1)[-1]: status for u, status in loaded if "/static/" in u}
    assert set(scripts) >= {"app.js", "page.js", "outline.js", "transcript.js"}
    assert set(scripts.values()) == {200}


def test_keyboard_only_search_and_play(page):
    page.keyboard.press("Tab")  # skip link
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "search-input"
    page.keyboard.type("how much ultraviolet C radiation is absorbed")
    page.keyboard.press("Enter")
    card, start = _uvc_card(page.locator("#results"))
    # Tab forward from the search box until the card has focus, then press Space.
    for _ in range(20):
        page.keyboard.press("Tab")
        if card.evaluate("element => element === document.activeElement"):
            break
    else:
        raise AssertionError("the card cannot be reached with Tab")
    outline = card.evaluate("element => getComputedStyle(element).outlineStyle")
    assert outline != "none"  # focus is visible
    page.keyboard.press("Space")
    assert abs(_playing_from(page, start) - start) < 1


def test_a_card_shows_the_text_on_screen_while_it_was_said(page):
    page.get_by_label("Search for a moment").fill("Where does most of the ozone sit?")
    page.keyboard.press("Enter")
    cards = page.locator("#results button.card[data-source$='ozone_explainer.mp4']")
    cards.first.wait_for()
    texts = [cards.nth(i).inner_text() for i in range(cards.count())]
    assert any("On screen:" in t and "ALTITUDE" in t.upper() for t in texts), texts


def test_audio_moments_play_in_the_audio_player(page):
    page.get_by_label("Search for a moment").fill("what did the team decide about the release")
    page.keyboard.press("Enter")
    card = page.locator("#results button.card[data-source$='team_sync.mp3']").first
    card.click()
    page.wait_for_function(
        "() => { const a = document.getElementById('audio');"
        " return !a.hidden && a.readyState >= 1 && !a.seeking; }",
        timeout=20_000,
    )
    assert page.locator("#video").is_hidden()
    start = float(card.get_attribute("data-start"))
    assert abs(page.evaluate("document.getElementById('audio').currentTime") - start) < 1


def test_narrow_screen_has_no_sideways_scrolling(browser, service_url):
    with opened(browser, service_url, viewport={"width": 360, "height": 740}) as narrow:
        narrow.get_by_label("Search for a moment").fill("ozone layer")
        narrow.keyboard.press("Enter")
        narrow.locator("#results button.card").first.wait_for()
        assert narrow.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_a_search_link_restores_the_search(page):
    page.goto("/?q=ultraviolet+C+radiation")
    page.locator("#results button.card").first.wait_for()
    assert page.get_by_label("Search for a moment").input_value() == "ultraviolet C radiation"
    download = page.locator("#results a.download").first
    assert download.inner_text() == "Download this moment"
    assert download.get_attribute("href").startswith("/api/clip?source=")
    page.get_by_label("Search for a moment").fill("ozone hole")
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search === '?q=ozone+hole'")


def _searched_with_option(page, label: str, value: str) -> list[str]:
    """Search "ultraviolet C radiation" with the search option ``label`` set to
    ``value``; the URLs of the page's /api/search requests, this one's and later ones."""
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/search" in r.url else None)
    page.get_by_label("Search for a moment").fill("ultraviolet C radiation")
    page.get_by_text("Search options").click()
    page.get_by_label(label).fill(value)
    page.keyboard.press("Enter")
    return asked


def test_search_options_reach_the_api_and_the_search_link(page):
    asked = _searched_with_option(page, "Only what these speakers said", "2")
    # the example index has no speaker labels: the page says so, not "no moments"
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('no speaker labels')"
    )
    assert "speaker=2" in asked[-1] and "by_chapter" not in asked[-1]
    assert page.evaluate("location.search") == "?q=ultraviolet+C+radiation&speaker=2"
    page.get_by_label("Only what these speakers said").fill("")
    page.get_by_label("Score each moment with its chapter's match too").check()
    page.get_by_label("Search for a moment").press("Enter")
    page.locator("#results button.card").first.wait_for()
    assert "by_chapter=true" in asked[-1] and "speaker" not in asked[-1]
    page.goto("/?q=ultraviolet+C+radiation&speaker=SPEAKER_3")
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('no speaker labels')"
    )
    assert page.get_by_label("Only what these speakers said").input_value() == "SPEAKER_3"
    assert page.locator("#search-options").get_attribute("open") is not None


def test_the_named_speaker_option_reaches_the_api_and_the_search_link(page):
    # /api/search and `search` took by_named_speaker; the page had no way to ask for it.
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/search" in r.url else None)
    page.get_by_label("Search for a moment").fill("ultraviolet C radiation")
    page.get_by_text("Search options").click()
    page.get_by_label("Only what a speaker the question names said").check()
    page.keyboard.press("Enter")
    page.locator("#results button.card").first.wait_for()
    assert "by_named_speaker=true" in asked[-1] and "by_chapter" not in asked[-1]
    assert page.evaluate("location.search") == "?q=ultraviolet+C+radiation&by_named_speaker=true"
    page.goto("/?q=ultraviolet+C+radiation&by_named_speaker=true")
    page.locator("#results button.card").first.wait_for()
    assert page.get_by_label("Only what a speaker the question names said").is_checked()
    assert not page.get_by_label("Score each moment with its chapter's match too").is_checked()
    assert page.locator("#search-options").get_attribute("open") is not None


def test_a_language_reaches_the_api_and_the_search_link(page):
    asked = _searched_with_option(page, "Only what was said in these languages", "French")
    # the example index is English: the page names the languages it holds
    page.wait_for_function(
        "() => document.getElementById('status').textContent.includes('English (en)')"
    )
    assert "language=French" in asked[-1]
    assert page.evaluate("location.search") == "?q=ultraviolet+C+radiation&language=French"
    page.goto("/?q=ultraviolet+C+radiation&language=EN")
    page.locator("#results button.card").first.wait_for()
    assert "language=EN" in asked[-1]
    assert page.get_by_label("Only what was said in these languages").input_value() == "EN"
    assert page.locator("#search-options").get_attribute("open") is not None


def test_the_ask_form_keeps_to_the_languages_of_the_search_options(page):
    question = "how much ultraviolet C radiation is absorbed"

    def ask(language: str, status: str) -> dict:
        """Ask with ``language`` in the search options; the /api/ask/stream body sent."""
        page.get_by_label("Only what was said in these languages").fill(language)
        page.get_by_label("Ask a question").fill(question)
        with page.expect_request(lambda r: r.url.endswith("/api/ask/stream")) as sent:
            page.get_by_role("button", name="Ask").click()  # sets the status "Working…" first
        page.wait_for_function(
            "status => document.getElementById('status').textContent === status", arg=status
        )
        return sent.value.post_data_json

    page.get_by_text("Search options").click()
    # the example index is English: nothing said in French answers it
    assert ask("French", "Not found in the index.") == {"question": question, "language": "French"}
    assert page.locator("#citations .card").count() == 0
    assert ask("English", "Answered.") == {"question": question, "language": "English"}
    assert page.locator("#citations .card").count() > 0
    assert ask(" ", "Answered.") == {"question": question}


def test_the_ask_form_keeps_to_the_speakers_of_the_search_options(page):
    question = "how much ultraviolet C radiation is absorbed"
    page.get_by_text("Search options").click()
    page.get_by_label("Only what these speakers said").fill("SPEAKER_2")
    page.get_by_label("Only what a speaker the question names said").check()
    page.get_by_label("Ask a question").fill(question)
    with page.expect_request(lambda r: r.url.endswith("/api/ask/stream")) as sent:
        page.get_by_role("button", name="Ask").click()
    page.wait_for_function(
        "() => !document.getElementById('status').textContent.startsWith('Working')"
    )
    assert sent.value.post_data_json == {
        "question": question, "speaker": "SPEAKER_2", "by_named_speaker": True,
    }  # fmt: skip
    # the example index has no speaker labels: nothing said by SPEAKER_2 answers it
    assert page.locator("#citations .card").count() == 0


def test_a_moment_link_opens_the_player_at_that_second(page):
    page.goto("/#source=ozone_explainer.mp4&t=29")
    assert abs(_playing_from(page, 29) - 29) < 1
    assert page.locator("#now-playing").inner_text() == "Playing ozone_explainer.mp4"
