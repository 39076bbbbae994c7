from __future__ import annotations

import numpy as np

from benchmarks.voice_units import Heard, pair_rates, unit_names


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


ANA, BEN, CARL = unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)
LIBRARY = {"ana": ANA, "ben": BEN}
# SPEAKER_1's voice is mostly ana's; its second unit is ben's own voice, its third too
# short to be heard alone; SPEAKER_2 is carl's, whom nobody named.
HEARD = Heard(
    units=[
        ("ana", "SPEAKER_1", 0.0, 3.0),
        ("ben", "SPEAKER_1", 3.0, 6.0),
        ("ana", "SPEAKER_1", 6.0, 6.5),
        ("carl", "SPEAKER_2", 7.0, 10.0),
        ("ben", "SPEAKER_2", 10.0, 12.0),
    ],
    labels={"SPEAKER_1": unit(0.9, 0.3, 0), "SPEAKER_2": unit(0, 0.2, 0.9)},
    own={2.0: {0: ANA, 1: BEN, 2: ANA, 3: CARL, 4: unit(0.1, 0.6, 0.8)}},
)


def test_the_label_rule_names_every_unit_of_a_label_by_the_labels_voice():
    names = unit_names(HEARD, LIBRARY, ("label", 2.0, 0.0, 0.9, 1.0))
    assert names == ["ana", "ana", "ana", None, None]


def test_a_long_units_own_voice_names_it_and_a_short_one_keeps_its_labels_name():
    # ben's unit (3 s) is heard alone; the 0.5 s unit keeps SPEAKER_1's name
    assert unit_names(HEARD, LIBRARY, ("unit", 2.0, 1.0, 0.9, 0.9)) == [
        "ana", "ben", "ana", None, None,
    ]  # fmt: skip
    # 'unit': a long unit's own voice below the unit threshold is unknown, whatever its
    # label; 'unit, else label': it keeps the label's name
    assert unit_names(HEARD, LIBRARY, ("unit", 2.0, 1.0, 0.5, 1.01))[:2] == [None, None]
    assert unit_names(HEARD, LIBRARY, ("unit, else label", 2.0, 1.0, 0.9, 1.01))[:2] == [
        "ana", "ana",
    ]  # fmt: skip


def test_a_label_is_named_by_most_of_its_long_units_own_voices():
    # SPEAKER_2's voice matches nobody at 0.9; of its two long units carl's matches no one
    # and the 2 s one ben (0.6): one vote of two is no majority, so the label stays
    # unknown and only the 2 s unit is ben's. Units of 2.5 s or more: carl's alone votes.
    assert unit_names(HEARD, LIBRARY, ("vote", 2.0, 1.0, 0.9, 0.55))[3:] == [None, "ben"]
    assert unit_names(HEARD, LIBRARY, ("vote", 2.0, 2.5, 0.9, 0.55))[3:] == [None, None]
    voted = Heard(HEARD.units[:3], {"SPEAKER_1": CARL}, {2.0: {0: ANA, 1: ANA, 2: BEN}})
    assert unit_names(voted, LIBRARY, ("vote", 2.0, 1.0, 0.9, 0.9)) == ["ana", "ana", "ana"]


def test_pair_rates_name_the_first_recordings_people_and_score_the_seconds_units():
    first = Heard(
        units=[("ana", "SPEAKER_1", 0.0, 3.0), ("ben", "SPEAKER_2", 3.0, 6.0)],
        labels={"SPEAKER_1": ANA, "SPEAKER_2": BEN},
        own={2.0: {}},
    )
    # the label rule on HEARD: ana's two units named, ben's first wrong (ana), his second
    # unknown; carl's unit unknown
    assert pair_rates(first, HEARD, ("label", 2.0, 0.0, 0.9, 1.0)) == (2, 4, 1, 1)
    assert pair_rates(first, HEARD, ("unit", 2.0, 1.0, 0.9, 0.9)) == (3, 4, 1, 1)
