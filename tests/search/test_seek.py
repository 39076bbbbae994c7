"""A hit starts where its best-matching sentence is said, not where its unit begins."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from llama_index_video import schema
from llama_index_video.search.searcher import hit_from_node
from llama_index_video.search.seek import sentence_start

TEXT = (
    "The weather was mild all autumn. Chess practice is held on Thursdays in the "
    "library. The bakery sold out of bread."
)
SENTENCES = [(0, 100.0), (33, 103.5), (88, 108.25)]


def test_the_sentence_with_the_querys_rare_words_is_picked():
    assert sentence_start("When is chess practice?", TEXT, SENTENCES) == 103.5
    assert sentence_start("who sold bread", TEXT, SENTENCES) == 108.25
    assert sentence_start("Thursday practice", TEXT, SENTENCES) == 103.5  # stems agree


def test_no_choice_or_no_shared_word_keeps_the_unit_start():
    assert sentence_start("When is chess practice?", TEXT, SENTENCES[:1]) is None
    assert sentence_start("Which board game club meets weekly?", TEXT, SENTENCES) is None
    assert sentence_start("what is it", TEXT, SENTENCES) is None  # stopwords only


def test_sentences_are_stored_flat_and_read_back():
    stored = schema.format_sentences([(0, 3661.25), (57, 3665.5)])
    assert stored == "0:3661.25 57:3665.5"
    assert schema.parse_sentences(stored) == [(0, 3661.25), (57, 3665.5)]
    assert schema.parse_sentences(None) == [] and schema.parse_sentences("0:x") == []


@pytest.fixture
def long_unit() -> TextNode:
    start, end = SENTENCES[0][1], 111.0
    return TextNode(
        text=TEXT,
        metadata={
            schema.SOURCE: "/media/club.mp3",
            schema.FILE_NAME: "club.mp3",
            schema.MODALITY: "transcript",
            schema.START_S: start,
            schema.END_S: end,
            schema.LABEL: schema.moment_label("club.mp3", start, end),
            schema.MEDIA_URL: schema.media_fragment_url("/media/club.mp3", start),
            schema.SENTENCES: schema.format_sentences(SENTENCES),
        },
    )


def test_the_hit_its_label_and_link_start_at_the_sentence(long_unit):
    hit = hit_from_node(NodeWithScore(node=long_unit, score=0.6), query="chess practice day")
    assert hit.start == 103.5 and hit.end == 111.0
    assert hit.label == "[club.mp3 01:43-01:51]"
    assert hit.url == "/media/club.mp3#t=103.5"
    assert hit.citation.label == hit.label


def test_without_a_query_the_hit_starts_with_its_unit(long_unit):
    hit = hit_from_node(NodeWithScore(node=long_unit, score=0.6))
    assert (hit.start, hit.label) == (100.0, "[club.mp3 01:40-01:51]")


def test_a_search_seeks_to_the_sentence_narrated_at_its_known_time(example_index, timeline):
    # The unit "We shard the payments table ... Reads go through a Redis cache with a
    # time to live of five minutes." begins at 17.0 s; the cache sentence at 24.0 s.
    said = next(
        line
        for line in timeline["checkout_deep_dive.mp4"]["narration"]
        if "time to live" in line["text"]
    )
    hits = example_index.search("How long does the Redis cache keep entries (time to live)?")
    hit = next(h for h in hits if h.modality == "transcript")
    assert hit.start == said["start"] == 24.0
    assert hit.label.startswith("[checkout_deep_dive.mp4 00:24-")
    assert hit.url is not None and hit.url.endswith("#t=24.0")


def test_a_search_seeks_into_a_long_sentence_at_the_clause_that_answers():
    from llama_index_video.reader.units import build_units
    from llama_index_video.transcription.base import Segment, Word

    text = (
        "or before and after the decimal point for presentation types, G4G, the "
        "orchestra's principal violinist, Henry Klassen, has played with them for 30 years."
    )
    words = [Word(0.45 * i, 0.45 * i + 0.4, piece) for i, piece in enumerate(text.split())]
    (unit,) = build_units([Segment(0.0, words[-1].end, text, tuple(words))])

    start = sentence_start("Who is the orchestra's principal violinist?", unit.text, unit.sentences)
    assert start == pytest.approx(words[text.split().index("orchestra's") - 1].start)  # "the"


def test_a_match_over_two_clauses_of_a_sentence_seeks_to_the_first():
    # real speech (the hour of LJ Speech readings, benchmarks/long_real_speech.py): the
    # query's words sit in "for one shilling," and "with costs of ...": the seek went to
    # the second clause, 2 s into the phrase and 7 s into the sentence
    from llama_index_video.reader.units import build_units
    from llama_index_video.transcription.base import Segment, Word

    text = "Thomas Dobson, on 22 August 1799, for one shilling, with costs of 8 shillings 10p."
    words = [Word(0.45 * i, 0.45 * i + 0.4, piece) for i, piece in enumerate(text.split())]
    (unit,) = build_units([Segment(0.0, words[-1].end, text, tuple(words))])
    assert len(unit.sentences) > 2  # a long sentence: its clauses are places to seek to

    start = sentence_start("a debt of one shilling and the costs", unit.text, unit.sentences)
    assert start == pytest.approx(words[text.split().index("for")].start)
    # a clause of the next sentence does not pull the seek back over a full stop
    two = "The debtors paid the costs. For one shilling, with costs of eight shillings."
    pieces = [(0, 0.0), (28, 2.0), (46, 3.5)]
    assert sentence_start("one shilling and the costs", two, pieces) == 2.0


def test_a_llama_index_retriever_hands_on_the_moment_at_the_sentence(example_index):
    # A RetrieverQueryEngine over as_retriever() shows the model each node's label and
    # start: they were the unit's (00:17), so its answers cited the cache 7 s early
    query = "How long does the Redis cache keep entries (time to live)?"
    nodes = example_index.as_retriever().retrieve(query)
    unit = next(n.node for n in nodes if n.node.metadata[schema.MODALITY] == "transcript")
    assert unit.metadata[schema.START_S] == 24.0
    assert unit.metadata[schema.LABEL].startswith("[checkout_deep_dive.mp4 00:24-")
    assert unit.metadata[schema.TIME_LABEL] == "00:24"
    assert unit.metadata[schema.MEDIA_URL].endswith("checkout_deep_dive.mp4#t=24.0")
    search_hit = next(h for h in example_index.search(query) if h.modality == "transcript")
    assert search_hit.label == unit.metadata[schema.LABEL]
