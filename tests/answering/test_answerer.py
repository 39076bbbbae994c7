"""The answering pipeline over a real index, with Claude behind the fake Anthropic API."""

from __future__ import annotations

import base64
import io
import json
import sys

import pytest
from PIL import Image

from llama_index_video.answering.answerer import AskOptions, make_llm, make_reranker
from llama_index_video.answering.prompts import NOT_FOUND_ANSWER
from llama_index_video.cli.main import main
from llama_index_video.errors import AnswerError, MissingDependencyError
from llama_index_video.postprocessing.timestamp_frame import MomentNode
from tests.fakes.anthropic_server import text_reply

WHY = "Why does the temperature rise with altitude in the stratosphere?"


def _question_hit(index, question):
    return index.search(question)[0]


def _images(body):
    return [
        block
        for message in body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]


def test_answer_is_generated_from_labelled_context_and_frames(
    example_index, make_claude, fake_anthropic
):
    hit = _question_hit(example_index, WHY)
    unit = next(c for c in hit.context if "absorbed by the ozone layer" in c.text)
    label = f"[ozone_explainer.mp4 {_mmss(unit.start)}-{_mmss(unit.end)}]"
    fake_anthropic.enqueue(text_reply(f"Ultraviolet radiation is absorbed by ozone {label}."))
    answer = example_index.ask(WHY, llm=make_claude())

    body = fake_anthropic.messages_requests()[0].body
    sent = json.dumps(body)
    assert "ultraviolet radiation is absorbed by the ozone layer" in sent.lower()
    assert label in sent
    images = _images(body)
    assert images and len(images) <= AskOptions().max_images
    picture = Image.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"])))
    assert picture.format == "JPEG" and max(picture.size) <= 1568

    assert answer.found and answer.model == "claude-sonnet-4-6"
    assert [c.label for c in answer.citations] == [label]
    citation = answer.citations[0]
    assert citation.url.startswith(citation.source + "#t=") and citation.start == unit.start
    assert not answer.unverified
    assert answer.hits and answer.hits[0].label == hit.label


def test_an_invented_citation_is_flagged_not_cited(example_index, make_claude, fake_anthropic):
    invented = "[ozone_explainer.mp4 09:00-09:10]"
    fake_anthropic.enqueue(text_reply(f"It warms because of volcanoes {invented}."))
    answer = example_index.ask(WHY, llm=make_claude())
    assert answer.citations == [] and answer.unverified == [invented]
    assert "(unverified)" in answer.text

    fake_anthropic.enqueue(text_reply(f"Volcanoes {invented}."))
    stripped = example_index.ask(WHY, llm=make_claude(), options=AskOptions(unverified="strip"))
    assert stripped.text == "Volcanoes." and stripped.unverified == [invented]


def test_nothing_relevant_means_no_model_call(example_index, make_claude, fake_anthropic):
    # Its hits (with the gate off) are under the sure bar; "What is the capital of
    # Australia?" sits at the bar since the meetings joined the fit (issue 35).
    answer = example_index.ask("What is the stock price of Apple?", llm=make_claude())
    assert not answer.found and answer.text.startswith("Not found in the index")
    assert fake_anthropic.messages_requests() == []


def test_the_model_saying_not_found_is_reported_as_not_found(
    example_index, make_claude, fake_anthropic
):
    fake_anthropic.enqueue(text_reply(NOT_FOUND_ANSWER))
    answer = example_index.ask(WHY, llm=make_claude())
    assert len(fake_anthropic.messages_requests()) == 1
    assert not answer.found and answer.citations == [] and answer.hits


def test_with_a_model_the_model_decides_unless_the_gate_is_sure(
    example_index, make_claude, fake_anthropic
):
    """A near-topic question over the gate's sure bar but under its cut: search turns it
    away, ``ask`` with a model asks the model (the stand-in replies as a model that finds
    no answer in the moments), and that reply is "not found" with its reason; a question
    under the sure bar never reaches the model."""
    from llama_index_video.answering.answerer import MODEL_NOT_FOUND_REASON
    from llama_index_video.answering.extractive import NOT_FOUND_REASON
    from llama_index_video.index import VideoIndex
    from llama_index_video.search.relevance import ConfidenceGate

    ungated = VideoIndex(example_index.path, embed_model=example_index.embed_model, relevance=None)
    near, far = "What does ozone smell like?", "zzqx vbnm plorf"

    def best(question: str) -> float:
        return max((h.confidence for h in ungated.search(question)), default=0.0)

    assert best(far) < best(near) < 0.99
    sure = (best(far) + best(near)) / 2  # near is over the sure bar, far under it
    gate = ConfidenceGate(calibration=example_index.calibration, cut=0.99, sure=sure)
    index = VideoIndex(example_index.path, embed_model=example_index.embed_model, relevance=gate)
    assert index.search(near) == []  # under the cut

    fake_anthropic.enqueue(text_reply(NOT_FOUND_ANSWER))
    answer = index.ask(near, llm=make_claude())
    assert len(fake_anthropic.messages_requests()) == 1
    assert not answer.found and answer.hits and answer.reason == MODEL_NOT_FOUND_REASON
    shown = answer.to_dict()
    assert shown["found"] is False and shown["reason"] == MODEL_NOT_FOUND_REASON

    extractive = index.ask(near)  # no model: the cut decides
    assert not extractive.found and extractive.reason == NOT_FOUND_REASON

    far_answer = index.ask(far, llm=make_claude())  # under the sure bar
    assert not far_answer.found and far_answer.reason == NOT_FOUND_REASON
    assert len(fake_anthropic.messages_requests()) == 1
    index.close()
    ungated.close()


def test_streaming_yields_deltas_then_a_checked_answer(example_index, make_claude, fake_anthropic):
    hit = _question_hit(example_index, WHY)
    fake_anthropic.enqueue(text_reply("Because ", "ozone absorbs UV ", f"{hit.label}."))
    stream = example_index.answerer(llm=make_claude()).stream(WHY)
    with pytest.raises(AnswerError):
        stream.answer  # noqa: B018 (not complete yet)
    assert list(stream) == ["Because ", "ozone absorbs UV ", f"{hit.label}."]
    assert [c.label for c in stream.answer.citations] == [hit.label]


def test_query_fusion_asks_the_llm_for_phrasings_first(example_index, make_claude, fake_anthropic):
    fake_anthropic.enqueue(
        text_reply("1. what heats the stratosphere\n2. ozone absorbs ultraviolet light"),
        text_reply("Ozone absorbs UV."),
    )
    answer = example_index.ask(WHY, llm=make_claude(), options=AskOptions(num_queries=3))
    requests = fake_anthropic.messages_requests()
    assert len(requests) == 2
    assert "queries" in json.dumps(requests[0].body).lower()
    assert answer.text.startswith("Ozone absorbs UV.")


def test_a_reranker_runs_before_neighbours_and_frames_are_attached(
    example_index, tiny_cross_encoder
):
    reranker = make_reranker(str(tiny_cross_encoder), top_n=2)
    answerer = example_index.answerer(reranker=reranker, options=AskOptions(top_k=5))
    nodes = answerer.retrieve(WHY)
    assert 1 <= len(nodes) <= 2
    assert all(
        isinstance(n.node, MomentNode) for n in nodes if n.node.metadata.get("start_s") is not None
    )


def test_a_reranker_without_sentence_transformers_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[sentence-transformers\]"):
        make_reranker("cross-encoder/ms-marco-MiniLM-L-6-v2", top_n=3)


def test_a_reranker_that_cannot_load_is_one_line(tmp_path):
    (tmp_path / "not-a-model").mkdir()
    with pytest.raises(AnswerError, match="not-a-model") as raised:
        make_reranker(str(tmp_path / "not-a-model"), top_n=3)
    assert "\n" not in str(raised.value)


def test_auto_choice_without_keys_is_extractive(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert make_llm("auto") is None
    with pytest.raises(AnswerError, match="ANTHROPIC_API_KEY"):
        make_llm("claude")


def test_cli_ask_json_through_claude(example_index, fake_anthropic, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    hit = _question_hit(example_index, WHY)
    fake_anthropic.enqueue(text_reply(f"UV is absorbed by the ozone layer {hit.label}."))
    code = main(["ask", WHY, "--index", str(example_index.path), "--json"])
    out = capsys.readouterr().out
    assert code == 0
    answer = json.loads(out)
    assert set(answer) >= {"answer", "citations", "hits", "found"}
    assert answer["citations"][0]["label"] == hit.label
    assert answer["citations"][0]["url"].startswith(answer["citations"][0]["source"] + "#t=")
    assert fake_anthropic.api_key not in out


def test_cli_ask_streams_then_lists_citations(example_index, fake_anthropic, monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    hit = _question_hit(example_index, WHY)
    fake_anthropic.enqueue(text_reply("UV ", f"absorbed {hit.label}."))
    assert main(["ask", WHY, "--index", str(example_index.path), "--llm", "claude"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"UV absorbed {hit.label}.")
    assert "Cited moments:" in out and "play: " in out
    assert fake_anthropic.messages_requests()[0].body.get("stream") is True


def _mmss(seconds):
    return f"{int(seconds) // 60:02d}:{int(seconds) % 60:02d}"
