"""On-screen text in other languages (benchmarks/ocr_languages.py): the scoring, and that
tesseract given a slide's language reads its letters where English data cannot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.ocr_languages import SLIDES, character_error_rate, render
from llama_index_video.ocr import TesseractEngine
from llama_index_video.ocr.screen import read_screen_text
from llama_index_video.ocr.tesseract import installed_languages


def test_the_character_error_rate_counts_edits_over_the_slides_characters() -> None:
    assert character_error_rate(("Größe",), ("Größe",)) == 0.0
    assert character_error_rate(("Größe",), ("GroBe",)) == pytest.approx(2 / 5)  # ö, ß
    assert character_error_rate(("ab", "cd"), ("ab",)) == pytest.approx(3 / 5)  # "\ncd" lost
    assert character_error_rate(("ab",), ()) == 1.0


def _language_data() -> frozenset[str]:
    tesseract = shutil.which("tesseract")
    return (installed_languages(tesseract) if tesseract else None) or frozenset()


@pytest.mark.skipif(
    not {"eng", "deu", "spa", "rus"} <= _language_data(),
    reason="tesseract with its eng, deu, spa and rus data (scripts/test.sh installs them)",
)
@pytest.mark.parametrize(("language", "letters"), [("deu", "ßöÜ"), ("spa", "ñ¿á"), ("rus", "Бж")])
def test_tesseract_reads_a_slide_in_its_language(
    tmp_path: Path, language: str, letters: str
) -> None:
    (slide,) = [s for s in SLIDES if s.language == language]
    image = render(slide, tmp_path / f"{language}.png")
    read = read_screen_text(TesseractEngine(languages=f"{language}+eng"), image).lines
    english_only = read_screen_text(TesseractEngine(languages="eng"), image).lines
    assert character_error_rate(slide.lines, read) <= 0.05, read
    assert all(letter in " ".join(read) for letter in letters), read
    assert character_error_rate(slide.lines, english_only) > 0.1, english_only
