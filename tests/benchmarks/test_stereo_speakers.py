"""The stereo benchmark's scoring and the conversations it builds."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.stereo_speakers import RATE, conversation, in_order_recall


def test_recall_counts_a_speakers_words_in_order_whatever_is_said_between():
    assert (
        in_order_recall("the pump keeps water moving", "The pump, hello, keeps the water moving.")
        == 1.0
    )
    assert in_order_recall(
        "the pump keeps water moving", "moving water keeps the pump"
    ) == pytest.approx(0.4)  # the pump
    assert in_order_recall("the pump keeps water moving", "") == 0.0


def test_turns_alternate_and_overlap_by_the_given_seconds():
    one = np.ones(2 * RATE, np.float32)
    left, right = conversation([(one, "a"), (one, "c")], [(one, "b")], 1.0)
    assert len(left) == len(right) == 4 * RATE  # a at 0-2 s, b at 1-3 s, c at 2-4 s
    assert left.all()
    assert not right[:RATE].any() and right[RATE : 3 * RATE].all() and not right[3 * RATE :].any()
    together = conversation([(one, "a")], [(one, "b")], None)
    assert together[0].all() and together[1].all()
