"""From an image to the lines of text it shows, the same way for every OCR backend.

A blank frame (black, white, one flat colour) is not handed to the engine at all. The
engine's boxes are then cleaned up:

- noise is dropped: low confidence, letters too small to read, and lines with fewer
  than two letters or digits (tick marks, bullets, stray glyphs in a photo);
- text is normalised with NFKC, so the full-width punctuation a recogniser trained
  on Chinese sometimes emits (``（``) becomes ASCII, and runs of spaces collapse;
- boxes are joined into lines in reading order: rows top to bottom, boxes on a row
  left to right, joined with a space (RapidOCR splits "p99 latency: 340" and "ms"
  into two boxes), unless a gap wider than a few letters separates them (columns).
  Vertical text (a rotated axis label) is a line of its own, introduced as
  ``Vertical text:``: the layout is information a text embedding cannot see
  otherwise, and "the label of the vertical axis" then finds it.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from llama_index_video.ocr.base import OcrEngine, OcrOptions, ScreenText, TextBox

_BLANK_THUMB = 160  # long side of the thumbnail the blank test measures
VERTICAL_PREFIX = "Vertical text: "


def read_screen_text(
    engine: OcrEngine, image: str | Path, options: OcrOptions | None = None
) -> ScreenText:
    """The text ``image`` shows, in reading order; empty for blank or noise images.

    Args:
        engine: The OCR backend.
        image: An image file (e.g. a stored frame).
        options: Filtering and layout; defaults to :class:`OcrOptions`.
    """
    image, options = Path(image), options or OcrOptions()
    if is_blank(image, options.blank_std):
        return ScreenText()
    return arrange(engine.detect(image), options)


def is_blank(image: Path, max_std: float) -> bool:
    """True when the image is (nearly) one flat colour, so it cannot show text."""
    with Image.open(image) as picture:
        gray = picture.convert("L")
        gray.thumbnail((_BLANK_THUMB, _BLANK_THUMB))
        return float(np.asarray(gray, dtype=np.float32).std()) < max_std


def normalise_text(text: str) -> str:
    """NFKC-normalised text with runs of whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def arrange(boxes: Sequence[TextBox], options: OcrOptions) -> ScreenText:
    """Drop noisy boxes and join the rest into lines in reading order."""
    kept = [
        replace(box, text=normalise_text(box.text))
        for box in boxes
        if box.confidence >= options.min_confidence
        and box.glyph_size >= options.min_glyph_size
        and box.text.strip()
    ]
    lines: list[str] = []
    used: list[TextBox] = []
    for row in _rows(kept):
        for segment in _segments(row, options.column_gap):
            text = " ".join(box.text for box in segment)
            if sum(ch.isalnum() for ch in text) >= options.min_line_chars:
                lines.append(VERTICAL_PREFIX + text if segment[0].vertical else text)
                used.extend(segment)
    return ScreenText(tuple(lines), tuple(used))


def _rows(boxes: list[TextBox]) -> list[list[TextBox]]:
    """Boxes grouped into rows (vertical overlap of at least half a letter), top to bottom."""
    rows: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: (b.top, b.left)):
        row = None if box.vertical else next((r for r in rows if _same_row(r, box)), None)
        if row is None:
            rows.append([box])
        else:
            row.append(box)
    rows.sort(key=lambda r: (min(b.top for b in r), min(b.left for b in r)))
    return rows


def _same_row(row: list[TextBox], box: TextBox) -> bool:
    if row[0].vertical:
        return False
    top, bottom = min(b.top for b in row), max(b.bottom for b in row)
    overlap = min(bottom, box.bottom) - max(top, box.top)
    return overlap >= 0.5 * min(box.height, bottom - top)


def _segments(row: list[TextBox], column_gap: float) -> list[list[TextBox]]:
    """A row split where the gap between neighbours is wider than ``column_gap`` letters."""
    ordered = sorted(row, key=lambda b: b.left)
    segments = [[ordered[0]]]
    for previous, box in itertools.pairwise(ordered):
        gap = box.left - previous.right
        if gap > column_gap * max(previous.glyph_size, box.glyph_size):
            segments.append([box])
        else:
            segments[-1].append(box)
    return segments
