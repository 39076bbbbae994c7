"""The scoring of ``benchmarks/question_language.py``: right and wrong readings counted,
a language outside the tables expected as English."""

from __future__ import annotations

from benchmarks.question_language import expected, questions, score


def test_a_reading_is_scored_against_the_language_not_found_is_said_in():
    asked = [("fr", "Où ?"), ("fr", "Quand ?"), ("ar", "متى؟"), ("en", "When?")]
    readings = {"Où ?": "fr", "Quand ?": "es", "متى؟": "en", "When?": "en"}
    found = score(asked, readings.__getitem__)
    assert found.total == {"fr": 2, "ar": 1, "en": 1}
    assert found.right == {"fr": 1, "ar": 1, "en": 1}
    assert found.misses == [("fr", "es", "Quand ?")]
    assert found.accuracy == 0.75
    assert expected("ar") == "en" and expected("sv") == "sv"


def test_every_question_is_asked_natively_and_in_english():
    asked = questions()
    languages = {language for language, _ in asked}
    assert {"de", "es", "fr", "en", "ja", "zh", "pt"} <= languages
    english = sum(language == "en" for language, _ in asked)
    assert 0 < english < len(asked) and all(question.strip() for _, question in asked)
