"""Summaries written by Claude or Gemini (local stand-ins speaking the real wire
protocols): the model gets the chapters and their moments, an invented citation is
dropped and counted, the answer is cached per recording, model and span."""

from __future__ import annotations

import json
import shutil

import pytest

from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.cli.main import main
from llama_index_video.errors import AnswerError
from llama_index_video.schema import moment_label
from llama_index_video.summaries.written import CACHE_FOLDER
from tests.chapters.meeting_script import TOPIC_SECONDS, cues
from tests.chapters.test_summaries import meeting_index  # noqa: F401  (the shared fixture)
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply
from tests.fakes.gemini_server import FakeGeminiServer

GEMINI_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL")


def _label(name: str, opening: str) -> tuple[str, float]:
    """The label a model copies for the cue that starts with ``opening``, and its start."""
    start, end, _, _ = next(c for c in cues() if c[2].startswith(opening))
    return moment_label(name, start, end), start


def _reply(name: str) -> str:
    """A model's JSON summary: real citations, one invented (59:00) and one of another file."""
    budget, _ = _label(name, "We decided to fix the budget")
    quotes, _ = _label(name, "I'll send the charging dock quotes")
    price, _ = _label(name, "We still need to decide the price")
    return json.dumps(
        {
            "overview": [
                {"text": "The team fixed the budget.", "cite": budget},
                {"text": "They discussed a launch party.", "cite": f"[{name} 59:00-59:10]"},
            ],
            "decisions": [{"text": "The budget is fixed.", "cite": budget}],
            "action_items": [
                {"text": "Send the dock quotes.", "owner": "Anna", "due": "Friday", "cite": quotes},
                {"text": "Book a venue.", "owner": None, "due": None, "cite": "[other.wav 00:10]"},
            ],
            "open_questions": [{"text": "The price is open.", "cite": price}],
        }
    )


@pytest.fixture
def claude(fake_anthropic: FakeAnthropicServer) -> ClaudeMultimodalLLM:
    return ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, max_retries=0, timeout=5.0
    )


def test_claude_writes_it_from_the_chapters_and_an_invented_citation_is_dropped(
    meeting_index,  # noqa: F811
    fake_anthropic,
    claude,
):
    index, audio = meeting_index
    fake_anthropic.enqueue(text_reply("```json\n" + _reply(audio.name) + "\n```"))
    summary = index.summarize(audio, llm=claude)
    assert not summary.extractive and summary.model and "Claude" in summary.model
    assert summary.dropped_citations == 2
    assert [line.text for line in summary.overview] == ["The team fixed the budget."]
    (action,) = summary.action_items
    _, said_at = _label(audio.name, "I'll send the charging dock quotes")
    assert (action.speaker, action.by) == ("Anna", "Friday")
    assert abs(action.start - said_at) <= 1.0
    assert "2 item(s) the model wrote cited no stored moment" in summary.to_text()
    (request,) = fake_anthropic.messages_requests()
    sent = json.dumps(request.body)
    assert "JSON" in json.dumps(request.body.get("system"))
    for number, title in enumerate(index.chapters(audio), 1):
        assert f"Chapter {number}: {title.title}" in sent
    assert _label(audio.name, "Let's go with a curved yellow case")[0] in sent

    again = index.summarize(audio, llm=claude)
    assert again == summary
    assert len(fake_anthropic.messages_requests()) == 1  # cached: no second model call
    assert list((index.path / CACHE_FOLDER).glob("*.json"))


def test_another_span_is_another_summary(meeting_index, fake_anthropic, claude):  # noqa: F811
    index, audio = meeting_index
    fake_anthropic.enqueue(text_reply(_reply(audio.name)))
    summary = index.summarize(audio, start=0.0, end=TOPIC_SECONDS - 10, llm=claude)
    (request,) = fake_anthropic.messages_requests()
    sent = json.dumps(request.body)
    assert "Chapter 1:" in sent and "Chapter 2:" not in sent
    assert [line.text for line in summary.decisions] == ["The budget is fixed."]
    # The quotes and the price are said after the span: cited outside it, dropped too.
    assert summary.action_items == summary.open_questions == ()
    assert summary.dropped_citations == 4


def test_a_cached_whole_summary_is_never_a_span_s_nor_the_reverse(
    meeting_index,  # noqa: F811
    fake_anthropic,
    claude,
    request,
):
    index, audio = meeting_index
    cache = index.path / CACHE_FOLDER
    shutil.rmtree(cache, ignore_errors=True)  # the module's other tests share the index
    request.addfinalizer(lambda: shutil.rmtree(cache, ignore_errors=True))
    for _ in range(2):
        fake_anthropic.enqueue(text_reply(_reply(audio.name)))
    span = (TOPIC_SECONDS, 3 * TOPIC_SECONDS)
    whole = index.summarize(audio, llm=claude)
    stretch = index.summarize(audio, start=span[0], end=span[1], llm=claude)
    assert len(fake_anthropic.messages_requests()) == 2  # the span is not the whole's cache
    assert (whole.start, whole.end) == (None, None)
    assert (stretch.start, stretch.end) == span
    assert index.summarize(audio, llm=claude) == whole
    assert index.summarize(audio, start=span[0], end=span[1], llm=claude) == stretch
    assert len(fake_anthropic.messages_requests()) == 2


def test_an_answer_that_is_not_json_is_one_clear_error(
    meeting_index,  # noqa: F811
    fake_anthropic,
    claude,
):
    index, audio = meeting_index
    fake_anthropic.enqueue(text_reply("Here is a summary: they met."))
    with pytest.raises(AnswerError, match=r"meeting\.wav: the model's summary is not JSON"):
        index.summarize(audio, start=TOPIC_SECONDS, llm=claude)


def test_gemini_through_the_command_line(meeting_index, monkeypatch, capsys):  # noqa: F811
    index, audio = meeting_index
    for name in GEMINI_ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeGeminiServer() as server:
        monkeypatch.setenv("GEMINI_API_KEY", server.api_key)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
        server.queue_generate(_reply(audio.name))
        folder = str(index.path)
        assert main(["summarize", audio.name, "--index", folder, "--llm", "gemini"]) == 0
        text = capsys.readouterr().out
        assert "written by Gemini" in text and "Anna, Friday" in text
        assert "59:00" not in text and "other.wav" not in text
        assert main(["summarize", audio.name, "--index", folder, "--llm", "gemini", "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["extractive"] is False and printed["dropped_citations"] == 2
        assert len(server.requests_to("generate")) == 1
        generate = server.requests_to("generate")[0]
        assert generate.json is not None and "Chapter 1:" in json.dumps(generate.json)
