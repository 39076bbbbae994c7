"""benchmarks/relevance_models.py: the model signals' scoring code."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.relevance_models import focus_match, gaps, is_focus, rarity, word_vectors
from llama_index_video.search.relevance import Vocabulary


def test_word_vectors_average_a_words_pieces_and_leave_out_special_tokens():
    states = np.array([[9.0, 9.0], [1.0, 0.0], [0.0, 1.0], [3.0, 4.0], [9.0, 9.0]])
    # [CLS] "warr" "##anty" "period" [SEP]: word 0 is two pieces
    spans, vectors = word_vectors(
        states, [None, 0, 0, 1, None], [(0, 0), (0, 4), (4, 8), (9, 15), (0, 0)]
    )
    assert spans == [(0, 8), (9, 15)]
    assert np.allclose(vectors, [[2**-0.5, 2**-0.5], [0.6, 0.8]])
    assert word_vectors(states[:1], [None], [(0, 0)])[1].shape == (0, 2)


def test_focus_match_is_the_lowest_and_the_weighted_mean_of_each_words_best_cosine():
    question = (["warranty", "remote"], np.array([[1.0, 0.0], [0.0, 1.0]]))
    # the hit holds "remote" (cosine 1) and nothing near "warranty" (best 0.6)
    hit = np.array([[0.0, 1.0], [0.6, 0.8]])
    weights = {"warranty": 3.0, "remote": 1.0}
    lowest, mean = focus_match(question, hit, weights.__getitem__)
    assert lowest == pytest.approx(0.6)
    assert mean == pytest.approx((3 * 0.6 + 1 * 1.0) / 4)
    assert focus_match(([], np.zeros((0, 2))), hit, weights.__getitem__) == (1.0, 1.0)


def test_rarity_weighs_a_word_no_unit_holds_most():
    weight = rarity(Vocabulary.of({"remote": 9, "warranty": 0}, 10))
    assert weight("warranty") > weight("remote") > 0


def test_focus_words_are_the_content_words():
    assert is_focus("warranty") and is_focus("7")
    assert not is_focus("what") and not is_focus("x") and not is_focus("?")


def test_gaps_are_each_value_minus_the_best_other():
    assert gaps([0.9, 0.5, 0.7]) == pytest.approx([0.2, -0.4, -0.2])
    assert gaps([0.4]) == [0.0]
