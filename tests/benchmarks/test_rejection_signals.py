from __future__ import annotations

import pytest

from benchmarks.rejection_signals import (
    BASES,
    KTH,
    Signals,
    auc,
    fit,
    gap,
    rates,
    shipped,
    spread_share,
)
from benchmarks.rejection_signals import variants as word_drops
from llama_index_video.search.relevance import RelevanceGate


def signals(
    answerable: bool,
    best: float,
    typical: float = 0.3,
    found: bool = True,
    coverage: float = 0.0,
) -> Signals:
    cosines = (best, typical, typical - 0.1)
    return Signals(
        answerable=answerable,
        found=found,
        cosines=cosines,
        own=cosines,
        coverage=coverage,
        agreement=1.0,
    )


ROWS = [signals(True, 0.7), signals(True, 0.5), signals(False, 0.6), signals(False, 0.4)]


def test_auc_counts_the_pairs_ranked_right():
    # (0.7 > 0.6, 0.7 > 0.4, 0.5 < 0.6, 0.5 > 0.4): 3 of 4 pairs
    assert auc(ROWS, BASES["cosine"]) == pytest.approx(0.75)
    assert auc([signals(True, 0.5), signals(False, 0.5)], BASES["cosine"]) == 0.5


def test_rates_count_a_query_without_hits_as_rejected():
    rows = [*ROWS, signals(True, 0.9, found=False)]
    answered, rejected, weighted = rates(rows, BASES["cosine"], 0.55)
    assert answered == pytest.approx(1 / 3)  # 0.7 only; 0.5 below, 0.9 found nothing
    assert rejected == pytest.approx(0.5)
    assert 0 < weighted < 1


def test_the_fitted_cut_never_counts_on_a_query_without_hits():
    rows = [signals(True, 0.7), signals(False, 0.9, found=False), signals(False, 0.3)]
    cut, accuracy = fit(rows, BASES["cosine"])
    assert 0.3 < cut <= 0.7
    assert accuracy == 1.0


def test_margin_measures_how_far_the_best_stands_out():
    row = signals(True, 0.8, typical=0.6)  # cosines 0.8, 0.6, 0.5
    assert BASES["margin"](row) == pytest.approx(0.8 - 1.9 / 3)
    assert BASES["z-score"](row) > 1.0
    assert BASES["z-score in own recording (standout)"](row) == BASES["z-score"](row)


def test_gap_and_range_share_compare_the_best_with_the_rest():
    values = [1.0 - 0.05 * i for i in range(12)]
    assert gap(values) == pytest.approx(0.05 * (KTH - 1))
    assert gap([0.9, 0.5]) == pytest.approx(0.4)  # fewer than k: the last one
    assert spread_share([0.9, 0.5, 0.5, 0.1]) == pytest.approx(0.5)
    assert spread_share([0.4, 0.4]) == 0.0


def test_word_drops_leave_out_one_content_word_at_a_time():
    assert word_drops("How thick is the ozone layer?") == [
        "How is the ozone layer?",
        "How thick is the layer?",
        "How thick is the ozone",
    ]
    assert word_drops("What is it?") == []


def test_the_shipped_gate_abstains_on_short_recordings_only_when_told():
    gate = RelevanceGate(signal="standout", weight=1.0, cut=1.5)
    short = Signals(
        answerable=True,
        found=True,
        cosines=(0.6, 0.5),
        own=(0.6, 0.5),
        coverage=0.2,
        agreement=1.0,
    )
    assert shipped(gate)(short) == float("inf")
    assert shipped(gate, abstain=False)(short) == pytest.approx(1.0 + 0.2)
    row = signals(True, 0.8, typical=0.6)  # three candidates: judged
    assert shipped(gate)(row) == shipped(gate, abstain=False)(row) < float("inf")
    rows = [short, signals(False, 0.6, typical=0.59)]  # the second: judged, rejected
    assert rates(rows, shipped(gate), gate.cut)[:2] == (1.0, 1.0)
    assert rates(rows, shipped(gate, abstain=False), gate.cut)[:2] == (0.0, 1.0)
