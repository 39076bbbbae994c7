from __future__ import annotations

import pytest

from benchmarks.rejection_signals import BASES, Signals, auc, rates


def signals(answerable: bool, best: float, typical: float = 0.3, found: bool = True) -> Signals:
    return Signals(answerable=answerable, found=found, best=best, typical=typical, coverage=0.0)


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


def test_margin_and_headroom_measure_how_far_the_best_stands_out():
    row = signals(True, 0.8, typical=0.6)
    assert BASES["margin"](row) == pytest.approx(0.2)
    assert BASES["headroom"](row) == pytest.approx(0.5)
