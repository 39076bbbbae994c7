"""The monologues ``benchmarks/decision_gate.py`` counts chatter in."""

from __future__ import annotations

from benchmarks.decision_gate import monologues


def test_the_monologues_are_the_narrations_and_the_readings_each_in_time_order():
    said = monologues()
    assert {"ozone_explainer.mp4", "team_sync.mp3", "lj_reader", "librivox_reader"} <= set(said)
    assert "handbook.md" not in said and "phone_call_2f" not in said  # text; two voices
    for turns in said.values():
        starts = [start for start, _, _ in turns]
        assert turns and starts == sorted(starts)
        assert all(start < end and text.strip() for start, end, text in turns)
