"""On-screen text in other languages and scripts: which engine reads it, how well, at what cost.

    python benchmarks/ocr_languages.py [--engines rapidocr tesseract tesseract-lang]

Slides are rendered here (1280x720, dark text on white, DejaVu Sans 40 px, three lines
each) in German, Spanish, French, Russian and Greek, plus an English control slide, and
read through the package's own path (:func:`llama_index_video.ocr.screen.read_screen_text`)
by each engine:

- ``rapidocr``: the default engine, RapidOCR with its bundled PP-OCRv4 models;
- ``tesseract``: ``TesseractEngine()``, English data only (what ``--ocr tesseract`` was);
- ``tesseract-lang``: ``TesseractEngine(languages="<lang>+eng")`` with the slide's
  language data (Debian: ``tesseract-ocr-deu``, ``-spa``, ``-fra``, ``-rus``, ``-ell``);
  a language whose data is missing is reported as such.

Reported per slide and engine: character error rate (Levenshtein distance over the
characters of the slide's lines, joined by newlines, case kept), lines read exactly, and
CPU seconds per slide (this process and its children). The slides are rendered text, the
easiest case; a recording of a screen is harder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ocr_cost import cpu_seconds  # noqa: E402
from benchmarks.scoring import error_rate  # noqa: E402

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SIZE = (1280, 720)
FONT_PX = 40


@dataclass(frozen=True)
class Slide:
    language: str
    """Tesseract's code for the slide's language."""
    lines: tuple[str, ...]


SLIDES = (
    Slide(
        "eng", ("Quarterly review: sales up 12%", "Next meeting on Thursday", "Budget: 4,500 EUR")
    ),
    Slide(
        "deu",
        (
            "Größe der Straße: 12 €",
            "Übersicht: Äpfel, Öl und Füße",
            "Frau Keller leitet das Projekt",
        ),
    ),
    Slide(
        "spa",
        ("Año nuevo: señal, niño", "¿Cuándo llegará el envío?", "Las ventas crecieron un 12 %"),
    ),
    Slide(
        "fra", ("Façade, garçon, élève", "Où est la forêt ? Très près", "Le budget augmente de 5 %")
    ),
    Slide("rus", ("Привет, мир", "Бюджет вырос на 12 процентов", "Следующее совещание в среду")),
    Slide("ell", ("Καλημέρα κόσμε", "Ο προϋπολογισμός αυξήθηκε", "Επόμενη συνάντηση την Πέμπτη")),
)


def render(slide: Slide, path: Path) -> Path:
    """Draw ``slide``'s lines, one under another, into a PNG at ``path``."""
    image = Image.new("RGB", SIZE, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), FONT_PX)
    for row, line in enumerate(slide.lines):
        draw.text((80, 160 + row * 2 * FONT_PX), line, fill=(20, 20, 20), font=font)
    image.save(path)
    return path


def character_error_rate(reference: tuple[str, ...], read: tuple[str, ...]) -> float:
    """Character edit distance of the lines read against the slide's, over its length."""
    return error_rate("\n".join(reference), "\n".join(read))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=("rapidocr", "tesseract", "tesseract-lang"),
        default=["rapidocr", "tesseract", "tesseract-lang"],
    )
    args = parser.parse_args()

    from llama_index_video.errors import MissingDependencyError
    from llama_index_video.ocr import RapidOcrEngine, TesseractEngine
    from llama_index_video.ocr.base import OcrEngine
    from llama_index_video.ocr.screen import read_screen_text

    def engine(name: str, language: str) -> OcrEngine:
        if name == "rapidocr":
            return RapidOcrEngine()
        if name == "tesseract":
            return TesseractEngine()
        return TesseractEngine(languages=language if language == "eng" else f"{language}+eng")

    print("| slide | engine | CER | lines exact | CPU s | read |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as work:
        for slide in SLIDES:
            image = render(slide, Path(work) / f"{slide.language}.png")
            for name in args.engines:
                try:
                    reader = engine(name, slide.language)
                except MissingDependencyError as exc:
                    print(f"| {slide.language} | {name} | - | - | - | {exc} |")
                    continue
                read_screen_text(reader, image)  # warm: model load and first run apart
                started = cpu_seconds()
                lines = read_screen_text(reader, image).lines
                cpu = cpu_seconds() - started
                exact = sum(line in lines for line in slide.lines)
                print(
                    f"| {slide.language} | {name} | {character_error_rate(slide.lines, lines):.2f} "
                    f"| {exact}/{len(slide.lines)} | {cpu:.2f} | {' / '.join(lines)} |"
                )


if __name__ == "__main__":
    main()
