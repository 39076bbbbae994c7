"""The rejection signal: content words, distinctiveness-weighted coverage, the gate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llama_index_video.answering.relevance import (
    Relevance,
    RelevanceGate,
    content_words,
    coverage,
)
from llama_index_video.results import ContextSpan, SearchHit


def hit(text: str, score: float | None, *context: str) -> SearchHit:
    return SearchHit(
        source="/m/talk.mp4",
        modality="transcript",
        start=1.0,
        end=2.0,
        score=score,
        text=text,
        label="[talk.mp4 00:01-00:02]",
        url="/m/talk.mp4#t=1.0",
        frame_path=None,
        frame_time=None,
        context=[ContextSpan(1.0, 2.0, c) for c in context],
    )


TOPIC = [
    "The ozone layer absorbs about ninety percent of ultraviolet B radiation.",
    "In 1985 scientists discovered a hole in the ozone layer over Antarctica.",
    "The ozone layer is expected to recover by about 2066.",
]


def test_content_words_drop_function_words_and_agree_on_word_stems():
    assert content_words("What is the ozone layer made of?") == ["ozone", "layer"]
    assert content_words("How much does it absorb?") == ["absor"]
    assert content_words("absorbs absorption Absorbed") == ["absor"]
    assert content_words("What is the p99 in 2066?") == ["p99", "2066"]
    assert content_words("What is it?") == []


def test_a_near_topic_question_misses_its_distinctive_words():
    near = coverage("How thick is the ozone layer over the Arctic?", TOPIC)
    answerable = coverage("When was the hole in the ozone layer discovered?", TOPIC)
    paraphrase = coverage("In what year did scientists find the hole over Antarctica?", TOPIC)
    assert near < 0.3 < paraphrase < answerable == pytest.approx(1.0)


def test_words_every_text_contains_weigh_least():
    # "ozone" is in all three texts, "antarctica" in one: missing the rarer word costs more.
    without_topic = coverage("ozone mercury", TOPIC)
    without_rare = coverage("antarctica mercury", TOPIC)
    assert without_topic < without_rare


def test_a_question_without_content_words_is_not_contradicted():
    assert coverage("What is it?", TOPIC) == 1.0


@given(
    st.text(alphabet="abcdefgh ozone?", max_size=40),
    st.lists(st.text(alphabet="abcdefgh ozone.", max_size=60), min_size=1, max_size=5),
)
def test_coverage_is_a_share(question, texts):
    assert 0.0 <= coverage(question, texts) <= 1.0


def test_relevance_reads_the_best_hits_and_their_context():
    hits = [hit("Ozone is made of", 0.41, "three oxygen atoms."), hit("Other", 0.52)]
    relevance = Relevance.of("Which atoms make up ozone?", hits)
    assert relevance.similarity == 0.52
    assert relevance.coverage == pytest.approx(1.0)
    assert Relevance.of("anything", [hit("x", None)]).similarity == 0.0


def test_the_gate_combines_cosine_and_coverage():
    gate = RelevanceGate(weight=0.5, cut=0.6)
    about = [hit("The hole was discovered in 1985 over Antarctica.", 0.35)]
    assert gate.accepts("When was the hole over Antarctica discovered?", about)
    assert not gate.accepts("How thick is the layer over the Arctic?", about)
    assert not gate.accepts("When was the hole discovered?", [])
    assert gate.score(Relevance(similarity=0.3, coverage=0.4)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="weight"):
        RelevanceGate(weight=-1.0, cut=0.5)
