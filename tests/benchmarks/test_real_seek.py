"""The real-speech seek benchmark's scoring (benchmarks/real_seek.py)."""

from __future__ import annotations

import pytest

from benchmarks.real_seek import score


def test_the_first_hit_overlapping_each_turn_gives_its_seek_error():
    turns = [(10.0, 20.0), (30.0, 40.0), (50.0, 60.0), (70.0, 80.0), (90.0, 100.0)]
    hits = [
        [[0.0, 5.0], [13.0, 19.0], [10.0, 20.0]],  # the first overlapping: +3.0 (late)
        [[29.5, 41.0]],  # -0.5
        [[61.0, 65.0]],  # none overlaps (within 0.5 s): not found
        [[71.0, 72.0]],  # +1.0
        [[84.0, 95.0]],  # -6.0 (early)
    ]
    figures = score(turns, hits)
    assert figures["turns"] == 5 and figures["found"] == 4
    assert figures["median_s"] == pytest.approx(2.0)
    assert figures["p95_s"] == pytest.approx(6.0)  # nearest rank of [0.5, 1, 3, 6]
    assert figures["signed_median_s"] == pytest.approx(0.25)
    assert figures["late"] == 1 and figures["early"] == 1
    # below -5 | -5..-2 | -2..-0.5 | -0.5..0.5 | 0.5..2 | 2..5 | above 5 (-0.5 in the third)
    assert figures["spread"] == [1, 0, 1, 0, 1, 1, 0]


def test_nothing_found_has_no_error_figures():
    figures = score([(0.0, 1.0)], [[]])
    assert figures["found"] == 0 and figures["median_s"] is None and figures["late"] == 0
    assert figures["early"] == 0 and figures["spread"] == [0] * 7
