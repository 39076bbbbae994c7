"""A hit starts where its best-matching sentence is said, not where its unit begins."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from llama_index_video import schema
from llama_index_video.reader.units import TranscriptUnit, build_units
from llama_index_video.search.searcher import hit_from_node
from llama_index_video.search.seek import sentence_start
from llama_index_video.transcription.base import Segment, Word

TEXT = (
    "The weather was mild all autumn. Chess practice is held on Thursdays in the "
    "library. The bakery sold out of bread."
)
SENTENCES = [(0, 100.0), (33, 103.5), (88, 108.25)]


def _unit_of(text: str, *, pause_after: Sequence[int] = ()) -> tuple[TranscriptUnit, list[Word]]:
    """The units of ``text`` said at a word every 0.45 s (a 0.6 s pause after the words
    numbered in ``pause_after``), and its words."""
    words, at = [], 0.0
    for number, piece in enumerate(text.split()):
        words.append(Word(at, at + 0.4, piece))
        at += 0.45 + (0.6 if number in pause_after else 0.0)
    units = list(build_units([Segment(0.0, words[-1].end, text, tuple(words))]))
    return units[0], words


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
    text = (
        "or before and after the decimal point for presentation types, G4G, the "
        "orchestra's principal violinist, Henry Klassen, has played with them for 30 years."
    )
    unit, words = _unit_of(text)

    start = sentence_start("Who is the orchestra's principal violinist?", unit.text, unit.sentences)
    assert start == pytest.approx(words[text.split().index("orchestra's") - 1].start)  # "the"


def test_a_clause_of_the_next_sentence_does_not_pull_the_seek_back_over_a_full_stop():
    two = "The debtors paid the costs. For one pound, with costs of eight shillings."
    pieces = [(0, 0.0), (28, 2.0), (43, 3.5)]
    assert two[28:].startswith("For") and two[43:].startswith("with")
    assert sentence_start("a pound and costs of shillings", two, pieces) == 2.0


def test_a_match_seeks_back_over_a_clause_without_its_words_to_where_it_began():
    # real speech (the meeting trial, benchmarks/meeting_trial.py): "after his death" opens
    # the sentence, a clause of dates follows, then "printing in Venice had declined"; the
    # seek went to that last clause, 6 s late, as the clause before it holds no query word
    text = (
        "Jenson died in Rome. After his death in the 1480s, or at least by 1490, "
        "printing in Venice had declined very much."
    )
    unit, words = _unit_of(text)
    said = text.split()
    start = sentence_start("printing in Venice declined after his death", unit.text, unit.sentences)
    assert start == pytest.approx(words[said.index("After")].start)
    # a word said again in the best clause does not pull the seek back to an earlier one
    letters = (
        "The ends of the letters, such as the T and E, are hooked up in a vulgar way, "
        "instead of ending in the clear stroke of Jenson's letters."
    )
    unit, words = _unit_of(letters)
    assert len(unit.sentences) == 4
    query = "instead of ending in the clear stroke of Jenson's letters"
    start = sentence_start(query, unit.text, unit.sentences)
    assert start == pytest.approx(words[letters.split().index("instead")].start)


def test_an_unpunctuated_unit_does_not_send_the_seek_to_its_first_word():
    # speech recognition wrote no punctuation: the long sentence is cut into pieces at
    # the speaker's pauses, and a query word in the first piece ("community") is not
    # where the match began when the piece between holds none of the query
    pieces = (
        "so the community hall reopens next Monday morning",
        "and we walked along the canal with the dogs",
        "the allotment garden grows saffron these days",
        "and after that everybody went home for tea",
        "and the weather stayed dry for the whole week",
        "until the storm arrived late on Sunday night",
    )
    ends = list(accumulate(len(piece.split()) for piece in pieces))
    unit, words = _unit_of(" ".join(pieces), pause_after=[end - 1 for end in ends])
    assert len(unit.sentences) == 3 and not any(mark in unit.text for mark in ".,")
    start = sentence_start("Which community garden grows saffron?", unit.text, unit.sentences)
    assert start == pytest.approx(words[ends[1]].start)  # "the allotment garden"


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
