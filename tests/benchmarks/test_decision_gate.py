"""The monologues ``benchmarks/decision_gate.py`` counts chatter in."""

from __future__ import annotations

import itertools

from benchmarks.decision_gate import monologues, rev16_turns


def test_the_monologues_are_the_narrations_and_the_readings_each_in_time_order():
    said = monologues()
    assert {"ozone_explainer.mp4", "team_sync.mp3", "lj_reader", "librivox_reader"} <= set(said)
    assert "handbook.md" not in said and "phone_call_2f" not in said  # text; two voices
    for turns in said.values():
        starts = [start for start, _, _ in turns]
        assert turns and starts == sorted(starts)
        assert all(start < end and text.strip() for start, end, text in turns)


def test_a_rev16_transcript_becomes_one_turn_per_change_of_speaker(tmp_path):
    path = tmp_path / "1.nlp"
    path.write_text(
        "token|speaker|ts|endTs|punctuation|prepunctuation|case|tags|wer_tags|confidence\n"
        "Yeah|1|||,||UC|[]|[]|\nso|1|||.||LC|[]|[]|\nMm-hmm|2|||.||UC|[]|[]|\n"
        'quote|1||||"|LC|[]|[]|\n',
        encoding="utf-8",
    )
    turns = rev16_turns(path)
    assert [(t.speaker, t.text) for t in turns] == [
        ("1", "Yeah, so."),
        ("2", "Mm-hmm."),
        ("1", '"quote'),
    ]
    assert all(a.end < b.start for a, b in itertools.pairwise(turns))
