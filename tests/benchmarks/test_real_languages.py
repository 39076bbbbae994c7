"""The real-languages benchmark (benchmarks/real_languages.py) on one of its recordings."""

from __future__ import annotations

import pytest

from benchmarks.real_languages import REAL_LANGUAGES, main
from tests_support import needs_base


@needs_base
def test_a_german_reading_is_found_german_and_scored_against_its_transcript(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--files", str(REAL_LANGUAGES / "de_fleurs.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("de_fleurs"))
    spoken, found, written, english, error = row.split()[1:6]
    assert (spoken, found, written, english) == ("de", "de@0.0-11.2", "de", "no")
    assert 0.0 <= float(error.rstrip("%")) <= 50.0  # measured 23.8 %
    assert lines[-1] == "1 files: 0 with English text, 0 written in another language than spoken"
