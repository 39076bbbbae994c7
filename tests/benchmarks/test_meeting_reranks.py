"""The re-rankings benchmarks/meeting_reranks.py compares (the benchmark is not run here)."""

from __future__ import annotations

import numpy as np

from benchmarks.meeting_reranks import (
    TRIED,
    Asked,
    Stored,
    chapter_match,
    named_speaker,
    ranks,
    short_units,
)


def _meeting() -> tuple[Stored, Asked]:
    # three units: a short one of chapter A first by its fused score, then two of B
    vectors = np.eye(3)
    store = Stored(
        starts=np.array([0.0, 100.0, 200.0]),
        ends=np.array([5.0, 110.0, 210.0]),
        vectors=vectors,
        texts=["Oh, the budget!", "The budget is twelve euros fifty a unit.", "So it's decided."],
        speakers=["A", "B", "B"],
        chapter_of=["A", "B", "B"],
        chapter_vectors={"A": vectors[0], "B": vectors[1]},
        chapter_words={"A": {"budget"}, "B": {"budget", "euros", "unit", "decided"}},
    )
    asked = Asked(
        "What did B say the budget per unit was?",
        [(100.0, 110.0)],
        [(0, 0.60), (1, 0.55), (2, 0.30)],
        {"A": 0.2, "B": 0.5},
        vectors[1],
        {"B"},
    )
    return store, asked


def test_each_way_moves_the_answer_up_only_by_its_own_signal():
    store, asked = _meeting()
    assert ranks(store, [asked], TRIED["as fused"]) == [2]
    assert ranks(store, [asked], chapter_match(0.2)) == [1]  # 0.55 + 0.1 > 0.60 + 0.04
    assert ranks(store, [asked], chapter_match(0.05)) == [2]
    assert ranks(store, [asked], short_units(0.1)) == [1]  # "Oh, the budget!" has 3 words
    assert ranks(store, [asked], named_speaker(0.1)) == [1]
    asked.named = set()
    assert ranks(store, [asked], named_speaker(0.1)) == [2]


def test_every_way_tried_ranks_every_candidate():
    store, asked = _meeting()
    for way, extra in TRIED.items():
        assert ranks(store, [asked], extra)[0] in (1, 2), way
