"""The check of ``benchmarks/language_filter.py``: which recordings are labelled French."""

from __future__ import annotations

from benchmarks.language_filter import LANGUAGES, french


def test_odd_recordings_are_the_french_ones():
    assert LANGUAGES == ("en", "fr")
    assert french("/idx/recordings/lecture_001.mp4") and french("lecture_039.mp4")
    assert not french("/idx/recordings/lecture_000.mp4") and not french("lecture_012.mp4")
