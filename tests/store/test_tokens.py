"""The lexical index's tokens: case, accents, number formats and scripts folded the same
way for what is stored and for what is asked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_video.store.tokens import english_stop_words, scored_words, words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Twenty thousand: 20,000 people", ["twenty", "thousand", "20000", "people"]),
        ("It costs 3.5 euros, or 3,5", ["it", "costs", "3.5", "euros", "or", "3.5"]),
        ("Version 2.4.1 ships", ["version", "2.4.1", "ships"]),
        ("The GYM floor; gym-floor", ["the", "gym", "floor", "gym", "floor"]),
        ("Café in REYKJAVÍK, Straße", ["cafe", "in", "reykjavik", "strasse"]),
        ("it's Jane\u2019s", ["it", "jane"]),
        ("東京は首都です", ["東", "京", "は", "首", "都", "で", "す"]),
        ("Привет, мир 42", ["привет", "мир", "42"]),
        ("", []),
    ],
)
def test_words_fold_case_accents_and_number_formats(text, expected):
    assert words(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_tokenises_without_error_into_non_empty_tokens(text):
    tokens = words(text)
    assert all(tokens) and all(" " not in t for t in tokens)
    assert words(" ".join(tokens)) == tokens  # stored words read back the same


@pytest.mark.parametrize(
    "question",
    ["What's the plan they don't ship?", "What\u2019s the plan they didn\u2019t ship?"],
)
def test_contractions_are_stop_words_as_the_index_reads_them(question):
    """A contraction of a function word says nothing a stop word does not: BM25 scores
    neither "whats" nor NLTK's own "don't", read as "dont"."""
    assert scored_words(words(question)) == ["plan", "ship"]
    assert all(" " not in w and "'" not in w for w in english_stop_words())
    assert {"well", "shed", "id", "ill"}.isdisjoint(english_stop_words())  # words of their own
