from __future__ import annotations

import numpy as np

from benchmarks.voice_matching import match_rates, solo_stretches


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
    assert match_rates(library, 0.5) == (2, 2, 1, 2)
    assert match_rates(library, 0.7) == (2, 2, 2, 2)
    assert match_rates(library, 0.995) == (0, 2, 2, 2)
