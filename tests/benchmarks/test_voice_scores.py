from __future__ import annotations

import numpy as np
import pytest

from benchmarks.voice_scores import (
    Excerpt,
    Scored,
    cosine_scores,
    enrolled,
    fused_scores,
    heard,
    normalised,
    quantile_threshold,
    rates_at,
    series_out,
)


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


ANA, BEN, CARL = unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)
# ana is named on SPEAKER_1 (two of her units), ben on SPEAKER_2
FIRST = Excerpt(
    units=[
        ("ana", "SPEAKER_1", 0.0, 3.0),
        ("ana", "SPEAKER_1", 3.0, 4.0),
        ("ben", "SPEAKER_2", 4.0, 7.0),
    ],
    campplus={2.0: {0: np.stack([ANA, ANA]), 1: unit(1, 0.2, 0)[None], 2: BEN[None]}},
    resemblyzer={0: ANA[None], 1: ANA[None], 2: BEN[None]},
)
# the second: carl (never named) on SPEAKER_1 for 3 s, a 0.5 s unit of ben's label, and
# a long ben unit under carl's label
SECOND = Excerpt(
    units=[
        ("carl", "SPEAKER_1", 0.0, 3.0),
        ("ben", "SPEAKER_2", 3.0, 3.5),
        ("ben", "SPEAKER_1", 4.0, 6.0),
        ("ana", "SPEAKER_2", 6.0, 8.0),
    ],
    campplus={2.0: {0: CARL[None], 1: unit(0.2, 1, 0)[None], 2: BEN[None], 3: ANA[None]}},
    resemblyzer={0: CARL[None], 1: BEN[None], 2: BEN[None], 3: ANA[None]},
)


def test_a_named_voice_is_its_labels_voice_or_each_long_units():
    vectors = FIRST.campplus[2.0]
    one = enrolled(FIRST, vectors, per_unit=False)
    assert set(one) == {"ana", "ben"} and one["ana"].shape == (1, 3)
    assert np.allclose(one["ana"][0], ANA)  # only her 3 s unit: units of 2 s or more
    per_unit = enrolled(FIRST, vectors, per_unit=True)
    assert per_unit["ana"].shape == (1, 3)  # the 1 s unit is under 1.5 s
    assert np.allclose(per_unit["ben"], BEN)


def test_a_short_unit_is_heard_by_its_label_and_context_adds_its_labels_neighbours():
    vectors = SECOND.campplus[2.0]
    assert np.allclose(heard(SECOND, vectors, 0, min_alone=1.0), CARL)
    # unit 1 (0.5 s) is heard as SPEAKER_2's voice: its only long unit is ana's 2 s one
    assert np.allclose(heard(SECOND, vectors, 1, min_alone=1.0), ANA)
    # unit 2 (SPEAKER_1): its neighbours 1 and 3 are SPEAKER_2's, so one unit of context
    # adds nothing; two add unit 0 (SPEAKER_1)
    assert np.allclose(heard(SECOND, vectors, 2, min_alone=1.0, context=1), BEN)
    assert np.allclose(heard(SECOND, vectors, 2, min_alone=1.0, context=2), unit(0, 1, 1))


def test_cohort_normalisation_centres_on_the_cohorts_scores():
    cohort = np.stack([unit(1, 1, 0), unit(1, 0, 1), unit(0, 1, 1)])
    named = np.stack([ANA])
    mean = float(np.mean(named @ cohort.T))
    # a score equal to the named voice's mean cohort cosine normalises to 0
    z = normalised(np.array([mean]), named, CARL, cohort, top=3, how="z")
    assert z == pytest.approx([0.0], abs=1e-6)
    both = normalised(np.array([mean]), named, CARL, cohort, top=3, how="as")
    unit_side = (mean - np.mean(cohort @ CARL)) / np.std(cohort @ CARL)
    assert both == pytest.approx([unit_side / 2], abs=1e-5)


def test_rules_name_each_unit_by_its_best_match_and_score_it():
    cohort = np.stack([CARL])
    raw = cosine_scores(FIRST, SECOND, (2.0, 1.0, 0, "", 0, False, 1), cohort)
    assert [name for name, _ in raw] == ["ana", "ana", "ben", "ana"]
    assert raw[0][1] == pytest.approx(0.0, abs=1e-6)  # carl matches nobody
    assert raw[2][1] == pytest.approx(1.0, abs=1e-6)
    label_only = cosine_scores(FIRST, SECOND, (2.0, np.inf, 0, "", 0, False, 1), cohort)
    # by SPEAKER_1's voice (carl's and ben's mixed), every unit of the label alike
    assert label_only[0] == label_only[2] == ("ben", pytest.approx(float(BEN @ unit(0, 1, 1))))
    half = fused_scores(FIRST, SECOND, (2.0, 1.0, 0.5, "campplus"), cohort)
    assert half[2] == ("ben", pytest.approx(0.5 * 1.0 + 0.5 * float(BEN @ unit(0, 1, 1))))
    both = fused_scores(FIRST, SECOND, (2.0, 1.0, 0.5, "resemblyzer"), cohort)
    assert both[3] == ("ana", pytest.approx(1.0))


def test_rates_and_the_quantile_threshold():
    found = [
        Scored(named=True, right=True, score=0.8),
        Scored(named=True, right=False, score=0.9),
        *(Scored(named=False, right=False, score=s / 20) for s in range(20)),
    ]
    assert rates_at(found, 0.5) == (1, 2, 10, 20)
    threshold = quantile_threshold(found)  # 19 of the 20 others below it
    assert rates_at(found, threshold)[2:] == (19, 20)
    assert 0.9 < threshold <= 0.95 + 1e-6


def test_each_series_is_scored_with_the_threshold_fitted_on_the_others():
    def alone(person: str, voice: np.ndarray) -> Excerpt:
        return Excerpt([(person, "SPEAKER_1", 0.0, 3.0)], {2.0: {0: voice[None]}}, {})

    excerpts = {  # ana in two meetings of one series (ES2003), carl and dave in one each
        "ami_dev00": alone("ana", ANA),
        "ami_dev01": alone("ana", ANA),
        "ami_es2004a": alone("carl", CARL),
        "ami_trn04": alone("dave", BEN),
    }
    # ES2003's threshold is fitted on carl's and dave's excerpts alone: just above their
    # cosine to each other (0); ana's units (1.0) are named, everyone else's not
    found = series_out(excerpts, cosine_scores, [(2.0, 1.0, 0, "", 0, False, 1)], "quantile")
    assert found == (2, 2, 10, 10)
