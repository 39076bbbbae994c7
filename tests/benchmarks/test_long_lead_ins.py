"""The scoring of benchmarks/long_lead_ins.py: the facts a transcript lacks, per reading."""

from __future__ import annotations

from pathlib import Path

from benchmarks.long_lead_ins import by_part, lacking
from benchmarks.long_transcripts import Heard, Material, Part


def _material() -> Material:
    def heard(texts):
        said = " ".join(h.text for h in texts)
        return [
            fact
            for fact in ("a/1:red fox", "a/2:blue jay", "b/1:red fox")
            if fact.split(":")[1] in said
        ]

    return Material(
        name="joined",
        audio=Path("joined.wav"),
        said="red fox blue jay red fox",
        facts=3,
        heard=heard,
        parts=(Part("a", 0.0, 10.0, "red fox blue jay"), Part("b", 10.0, 20.0, "red fox")),
    )


def test_a_fact_is_lacking_only_when_the_defaults_hear_it_and_the_transcript_does_not():
    material = _material()
    defaults = [Heard(0.0, 5.0, "red fox"), Heard(5.0, 9.0, "blue jay")]
    assert lacking(material, [Heard(0.0, 5.0, "red fox")], defaults) == ["a/2:blue jay"]
    assert lacking(material, defaults, [Heard(0.0, 5.0, "red fox")]) == []


def test_lacking_facts_are_counted_for_the_reading_their_id_names():
    material = _material()
    assert by_part(material, ["a/1:red fox", "a/2:blue jay", "b/1:red fox"]) == {"a": 2, "b": 1}
    assert by_part(material, []) == {"a": 0, "b": 0}
