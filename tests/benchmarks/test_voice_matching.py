from __future__ import annotations

import numpy as np

from benchmarks.speaker_scoring import read_rttm
from benchmarks.voice_library import namings, scored
from benchmarks.voice_matching import MEETINGS, REAL, best_of, match_rates, solo_stretches


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_solo_stretches_leave_out_overlapped_speech():
    turns = [(0.0, 4.0, "ana"), (3.0, 6.0, "ben"), (8.0, 9.0, "ana")]
    ana = solo_stretches(turns, "ana")
    assert [(round(a, 2), round(b, 2)) for a, b in ana] == [(0.0, 3.0), (8.0, 9.0)]
    assert [(round(a, 2), round(b, 2)) for a, b in solo_stretches(turns, "ben")] == [(4.0, 6.0)]


def test_match_rates_count_named_voices_and_unknown_ones():
    library = {
        "first": {"ana": unit(1, 0, 0), "ben": unit(0, 1, 0)},
        "second": {"ana": unit(0.9, 0.1, 0), "carl": unit(0.6, 0, 0.8)},
    }
    # first named, second heard: ana matches ana (0.99); carl's best is ana at 0.60.
    # second named, first heard: ana matches ana; ben's best is ana at 0.11; ana's at 0.994.
    assert match_rates(library, threshold=0.5) == (2, 2, 1, 2)
    assert match_rates(library, threshold=0.7) == (2, 2, 2, 2)
    assert match_rates(library, threshold=0.995) == (0, 2, 2, 2)
    # a margin of 0.5: first heard, ana (0.99) leads carl (0.60) by only 0.39: unknown
    assert match_rates(library, threshold=0.5, margin=0.5) == (1, 2, 1, 2)


def test_best_of_keeps_unknown_at_target_first_then_names_most():
    settings = [(0.6,), (0.7,), (0.8,), (0.9,)]
    rates = [(10, 10, 80, 100), (9, 10, 95, 100), (9, 10, 99, 100), (5, 10, 100, 100)]
    assert best_of(settings, rates) == (0.8,)  # 0.9 named, 0.99 unknown beats 0.95
    # none keeps 0.95 unknown: the best sum of both shares
    assert best_of(settings[:2], [(10, 10, 80, 100), (6, 10, 90, 100)]) == (0.6,)
    # ties: the middle one
    assert best_of(settings[:3], [(9, 10, 99, 100)] * 3) == (0.7,)


def test_the_halves_never_share_a_person():
    people = [set(), set()]
    for stem, (_, half) in MEETINGS.items():
        people[half] |= {who for *_, who in read_rttm(REAL / f"{stem}.rttm")}
    assert people[0] and people[1] and not people[0] & people[1]


def test_namings_and_scores_of_units():
    first = [("ana", "SPEAKER_0", 0, 1), ("ana", "SPEAKER_0", 1, 2), ("ben", "SPEAKER_0", 2, 3)]
    # ben said most under ana's label: only ana is named
    assert namings(first) == {"SPEAKER_0": "ana"}
    second = [
        ("ana", "SPEAKER_1", 0, 1),
        ("ana", "SPEAKER_0", 1, 2),
        ("carl", "SPEAKER_0", 2, 3),
        (None, "SPEAKER_1", 3, 4),  # nobody alone at its middle: not scored
    ]
    # SPEAKER_1 named ana, SPEAKER_0 unknown: one of ana's two units right, carl unknown
    assert scored(second, {"SPEAKER_1": "ana", "SPEAKER_0": None}, {"ana"}) == (1, 2, 1, 1)
    assert scored(second, {"SPEAKER_0": "ana"}, {"ana"}) == (1, 2, 0, 1)
