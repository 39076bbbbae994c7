"""The scoring of benchmarks/mixed_languages.py: the arrangements, which units are a
clip's, scripts, and whose words a text's are (on the fixtures' human transcripts)."""

from __future__ import annotations

import json

import pytest

from benchmarks.mixed_languages import (
    FIXTURES,
    SHUFFLED_GAPS_S,
    TRIAL_GAP_S,
    Clip,
    Unit,
    clips_in,
    script_share,
    units_of,
    verdict,
    words_language,
)


def test_both_arrangements_hold_every_clip_once_with_their_pauses():
    trial, shuffled = clips_in("trial"), clips_in("shuffled")
    assert len(trial) == 24
    assert sorted(p for p, _, _ in trial) == sorted(p for p, _, _ in shuffled)
    assert [code for _, code, _ in trial].count("en") == 15
    assert [gap for _, _, gap in trial] == [0.0] + [TRIAL_GAP_S] * 23
    assert [p for p, _, _ in trial] != [p for p, _, _ in shuffled]
    assert all(SHUFFLED_GAPS_S[0] <= gap <= SHUFFLED_GAPS_S[1] for _, _, gap in shuffled[1:])
    assert shuffled == clips_in("shuffled")  # the same every run
    assert shuffled != clips_in("shuffled", seed=37)
    assert all(path.is_file() for path, _, _ in trial)


def test_a_unit_belongs_to_the_clip_its_middle_is_nearest():
    clips = [Clip("a", "en", 0.0, 10.0), Clip("b", "de", 12.0, 20.0)]
    units = [
        Unit(1.0, 4.0, "x", "en"),
        Unit(9.0, 11.5, "y", "en"),  # middle 10.25: nearer a
        Unit(10.5, 13.0, "z", "de"),  # middle 11.75: nearer b
        Unit(30.0, 31.0, "w", "de"),
    ]
    assert [[u.text for u in own] for own in units_of(clips, units)] == [["x", "y"], ["z", "w"]]


@pytest.mark.parametrize(
    ("text", "language", "share"),
    [
        ("construída pelos egípcios", "pt", 1.0),
        ("ピラミッドは", "pt", 0.0),
        ("金字塔は古い", "ja", 1.0),  # Han with kana
        ("金字塔很古老", "ja", 0.0),  # no kana: not Japanese
        ("金字塔很古老", "zh", 1.0),
        ("金字塔は", "zh", 0.0),
        ("الأهرامات", "ar", 1.0),
        ("", "de", 0.0),
    ],
)
def test_the_share_of_letters_in_a_languages_script(text, language, share):
    assert script_share(text, language) == pytest.approx(share)


@pytest.mark.parametrize("name", ["de_fleurs", "es_fleurs", "es_mls", "pt_fleurs"])
def test_the_fixtures_human_transcripts_are_in_their_own_words(name):
    about = json.loads((FIXTURES / "real_languages" / f"{name}.json").read_text("utf-8"))
    assert words_language(about["transcript"]) == about["language"]


def test_english_and_too_few_words():
    assert words_language("and then we looked at the budget of the remote") == "en"
    assert words_language("Gehäuse") is None


def test_a_clip_is_right_only_in_its_language_script_and_words():
    clip = Clip("pt_fleurs.ogg", "pt", 0.0, 14.0)
    said = "construída pelos egípcios no século três a grande pirâmide é uma das"
    assert verdict(clip, [Unit(0.0, 13.0, said, "pt")]).right
    assert not verdict(clip, [Unit(0.0, 13.0, "ピラミッドはエジプトの", "ja")]).right
    assert not verdict(clip, [Unit(0.0, 13.0, said, "es")]).right  # labelled Spanish
    written_as_spanish = "construida por los egipcios en el siglo tres la gran pirámide es una de"
    assert not verdict(clip, [Unit(0.0, 13.0, written_as_spanish, "pt")]).right
    assert not verdict(clip, []).right
