"""The multilingual benchmark's set, timing and scoring (benchmarks/multilingual.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.multilingual import (
    FIXTURES,
    SET,
    Item,
    Recording,
    cue_times,
    load_real,
    load_set,
    questions,
    srt,
    table,
    write_real,
)
from benchmarks.scoring import RankedHit
from llama_index_video.transcription.subtitles import load_subtitles


def test_the_set_has_three_languages_besides_english_each_asked_both_ways() -> None:
    recordings, gap = load_set()
    assert gap >= 1.0  # more than the scoring's 0.5 s tolerance on either side
    by_language = {r.language: r for r in recordings}
    assert {"de", "es", "fr", "en"} <= set(by_language)
    for language in ("de", "es", "fr"):
        items = by_language[language].items
        assert len(items) >= 9 and all(item.english for item in items)


@pytest.mark.parametrize(
    ("section", "load", "change", "message"),
    [
        ("recordings", load_set, lambda q: q.update(sentence=99), "no sentence 99"),
        ("recordings", load_set, lambda q: q.pop("english"), "no English version"),
        ("recordings", load_set, lambda q: q.update(id="de-lead"), "used twice"),
        ("real", load_real, lambda q: q.update(start=5.0, end=5.0), "start < end"),
        ("real", load_real, lambda q: q.pop("english"), "no English version"),
    ],
)
def test_a_broken_set_is_refused(tmp_path: Path, section: str, load, change, message) -> None:
    raw = json.loads(SET.read_text())
    change(raw[section][0]["questions"][0])
    broken = tmp_path / "set.json"
    broken.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match=message):
        load(broken)


def test_cues_follow_each_other_a_gap_apart() -> None:
    cues = cue_times([2.0, 1.5, 3.25], gap=1.2, lead=0.5)
    assert cues == [(0.5, 2.5), (3.7, 5.2), (6.4, 9.65)]


def test_the_subtitles_read_back_as_the_cues(tmp_path: Path) -> None:
    texts = ["Erster Satz.", "Zweiter Satz, länger.", "Dritter."]
    cues = cue_times([2.0, 3.5, 1.0], gap=1.2)
    path = tmp_path / "talk.de.srt"
    path.write_text(srt(cues, texts))
    segments = list(load_subtitles(path).segments)
    assert [s.text for s in segments] == texts
    for segment, (start, end) in zip(segments, cues, strict=True):
        assert segment.start == pytest.approx(start, abs=0.001)
        assert segment.end == pytest.approx(end, abs=0.001)


RECORDING = Recording(
    "talk.wav",
    "de",
    "de",
    ("Hallo.", "Frau Keller leitet das Projekt.", "Es kostet viel."),
    (Item("lead", 1, "Wer leitet das Projekt?", "Who leads the project?"),),
)


def test_questions_point_at_their_sentence_in_either_language() -> None:
    cues = cue_times([1.0, 2.0, 1.0], gap=1.2)
    (native,) = questions(RECORDING, cues, "native")
    (english,) = questions(RECORDING, cues, "english")
    assert (native.question, english.question) == (
        "Wer leitet das Projekt?",
        "Who leads the project?",
    )
    assert native.file == "talk.wav" and (native.start, native.end) == cues[1]
    english_recording = Recording("en.wav", "en", "en-us", ("Hi.",), (Item("hi", 0, "Hi?", None),))
    assert questions(english_recording, [(0.5, 1.0)], "english") == []


def test_the_table_scores_each_language_and_all_but_english_natively() -> None:
    cues = cue_times([1.0, 2.0, 1.0], gap=1.2)
    (german,) = questions(RECORDING, cues, "native")
    english_recording = Recording("en.wav", "en", "en-us", ("Hi.",), (Item("hi", 0, "Hi?", None),))
    (english,) = questions(english_recording, [(0.5, 1.0)], "native")
    right = RankedHit("talk.wav", *cues[1], "")
    wrong = RankedHit("talk.wav", *cues[2], "")
    results = {
        ("de", "native"): [(german, [wrong, right])],
        ("en", "native"): [(english, [RankedHit("en.wav", 0.5, 1.0, "")])],
    }
    rows = table("m", results)
    assert "| m | de | native | 1 | 0.00 | 1.00 | 0.50 |" in rows
    assert "| m | en | native | 1 | 1.00 | 1.00 | 1.00 |" in rows
    assert "| m | de+es+fr | native | 1 | 0.00 | 1.00 | 0.50 |" in rows


def test_the_recordings_we_did_not_make_are_asked_both_ways_within_their_length() -> None:
    real = load_real()
    assert {r.language for r in real} >= {"de", "es", "pt", "ja", "zh", "ar"}
    for recording in real:
        manifest = json.loads((FIXTURES / recording.fixture).with_suffix(".json").read_text())
        assert (manifest.get("real") or manifest.get("kind") == "real") and manifest["licence"]
        length = manifest["duration"] - recording.cut
        native, english = recording.asked["native"], recording.asked["english"]
        assert native and [q.id for q in native] == [q.id for q in english]
        for question in (*native, *english):
            assert question.file == recording.file and question.kind.endswith(" real")
            assert question.start is not None and question.end is not None
            assert 0.0 <= question.start < question.end <= length


def test_a_real_recording_is_written_from_its_cut(tmp_path: Path) -> None:
    import wave

    (recording,) = [r for r in load_real() if r.cut > 0]
    write_real(recording, tmp_path)
    manifest = json.loads((FIXTURES / recording.fixture).with_suffix(".json").read_text())
    with wave.open(str(tmp_path / recording.file)) as written:
        seconds = written.getnframes() / written.getframerate()
    assert seconds == pytest.approx(manifest["duration"] - recording.cut, abs=0.05)


def test_the_table_sums_the_real_recordings_apart_from_the_synthetic_ones() -> None:
    real = next(r for r in load_real() if r.language == "es")
    question = real.asked["english"][0]
    right = RankedHit(real.file, question.start, question.end, "")
    rows = table("m", {("es real", "english"): [(question, [right])]})
    assert any(row.startswith("| m | real | english | 1 | 1.00 |") for row in rows)
    assert not any("de+es+fr" in row for row in rows)
