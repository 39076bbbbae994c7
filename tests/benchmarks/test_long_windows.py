"""benchmarks/long_windows.py: the word alignment and the causes it names; the hour of
real speech benchmarks/long_real_speech.py joins."""

from __future__ import annotations

import json
import random
import wave

import numpy as np

from benchmarks import long_real_speech
from benchmarks.long_transcripts import Heard
from benchmarks.long_windows import ADDED, LEFT_OUT, MATCH, SUBSTITUTED, Words, align, causes
from benchmarks.scoring import edit_distance


def test_the_alignment_holds_every_word_once_and_its_errors_number_the_edit_distance():
    rng = random.Random(11)
    for _ in range(300):
        reference = rng.choices("abcd", k=rng.randint(0, 14))
        hypothesis = rng.choices("abcde", k=rng.randint(0, 14))
        pairs = align(reference, hypothesis)
        assert sum(kind != MATCH for _, _, kind in pairs) == edit_distance(reference, hypothesis)
        assert [i for i, _, kind in pairs if kind != ADDED] == list(range(len(reference)))
        written = [j for _, j, kind in pairs if kind != LEFT_OUT]
        assert written == list(range(len(hypothesis)))
        for i, j, kind in pairs:
            if kind == MATCH:
                assert reference[i] == hypothesis[j]
            if kind == SUBSTITUTED:
                assert reference[i] != hypothesis[j]


def test_a_known_alignment():
    said = ["the", "steward", "gave", "bread"]
    pairs = align(said, ["a", "steward", "gave", "the", "bread", "today"])
    assert [kind for _, _, kind in pairs] == [SUBSTITUTED, MATCH, MATCH, ADDED, MATCH, ADDED]


def _said(text: str) -> list[str]:
    return text.split()


def _words(*units: str) -> Words:
    return Words.of([Heard(float(k), float(k) + 1, text) for k, text in enumerate(units)])


def test_each_word_lost_against_the_defaults_is_named_by_its_cause():
    said = _said(
        "the steward of the prison kept the keys of every ward and "
        "the debtors paid the steward a fee for candles and coal each week in winter"
    )
    defaults = _words(" ".join(said))
    ours = _words(
        "the steward of the prison kept the keys of every",  # "ward" cut at the edge
        "and the debtors paid the stuart a fee",  # the recurring word misheard
        "for handles and coal",  # "candles" misheard inside the unit
        "in winter",  # "each week" left out between two units: an edge, too short
    )
    _, theirs, why = causes(said, ours, defaults)
    assert theirs == {}
    named = {said[i]: cause for i, cause in why.items()}
    assert named == {
        "ward": "edge",
        "steward": "recurring",
        "candles": "inside",
        "each": "edge",
        "week": "edge",
    }
    stretch = _words("the steward of the prison kept the keys", "the steward a fee for candles")
    _, _, why = causes(said, stretch, defaults)
    assert {said[i] for i, cause in why.items() if cause == "stretch"} >= {"debtors", "paid"}


def _kept(folder, name, seconds, text):
    samples = np.zeros(round(seconds * long_real_speech.SAMPLE_RATE), dtype=np.float32)
    long_real_speech._write_opus(samples, folder / f"{name}.opus")
    turns = [{"id": f"{name}-1", "start": 0.0, "end": seconds, "text": text}]
    (folder / f"{name}.json").write_text(json.dumps({"audio": f"{name}.opus", "turns": turns}))


def test_the_hour_joins_the_kept_recordings_and_moves_their_turns(tmp_path, monkeypatch):
    monkeypatch.setattr(long_real_speech, "FOLDER", tmp_path)
    _kept(tmp_path, "one", 2.0, "first words")
    _kept(tmp_path, "two", 3.0, "second words")
    audio, turns = long_real_speech.joined(("one", "two"), tmp_path / "cache")
    with wave.open(str(audio)) as joined:
        seconds = joined.getnframes() / joined.getframerate()
    pause = long_real_speech.PAUSE_SECONDS
    assert abs(seconds - (2.0 + 3.0 + 2 * pause)) < 0.1
    assert [t.text for t in turns] == ["first words", "second words"]
    assert abs(turns[1].start - (2.0 + pause)) < 0.1
    assert abs(turns[1].end - turns[1].start - 3.0) < 0.1
    again, _ = long_real_speech.joined(("one", "two"), tmp_path / "cache")
    assert again == audio
