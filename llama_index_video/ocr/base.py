"""What OCR produces, what a backend implements, and the options shared by all of them.

An :class:`OcrEngine` only finds text boxes in an image file; filtering, normalising
and arranging them into lines is shared (:mod:`llama_index_video.ocr.screen`), so
every backend behaves alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class TextBox:
    """One piece of recognised text and its axis-aligned bounds, in image pixels.

    Attributes:
        text: The text as recognised.
        confidence: The recogniser's confidence, 0 to 1.
        left: Left edge.
        top: Top edge.
        width: Width.
        height: Height.
    """

    text: str
    confidence: float
    left: float
    top: float
    width: float
    height: float

    @property
    def vertical(self) -> bool:
        """Text running up or down the image (a rotated axis label)."""
        return self.height > 1.5 * self.width

    @property
    def glyph_size(self) -> float:
        """The height of the letters: the box's short side."""
        return min(self.width, self.height)

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height


@dataclass(frozen=True)
class ScreenText:
    """The text one image shows: lines in reading order and the boxes they came from."""

    lines: tuple[str, ...] = ()
    boxes: tuple[TextBox, ...] = ()

    @property
    def text(self) -> str:
        """The lines, one per line."""
        return "\n".join(self.lines)

    @property
    def inline(self) -> str:
        """The lines on one line, for a frame's description."""
        return "; ".join(self.lines)


@runtime_checkable
class OcrEngine(Protocol):
    """A backend that finds text in an image file.

    Attributes:
        name: A short name for logs and benchmarks, e.g. ``"rapidocr"``.
    """

    name: str

    def detect(self, image: Path) -> list[TextBox]:
        """Every text box in ``image``, unfiltered, confidence scaled to 0-1."""
        ...


@dataclass(frozen=True, kw_only=True)
class OcrOptions:
    """What counts as text worth indexing, and when two frames show the same text.

    Attributes:
        min_confidence: Boxes recognised with less confidence are dropped.
        min_glyph_size: Boxes whose letters are smaller than this (pixels of the
            stored frame) are dropped: too small to read reliably.
        min_line_chars: Lines with fewer letters and digits than this are dropped
            (isolated characters are mostly noise: tick marks, bullets, logos).
        column_gap: Two boxes on the same row are joined into one line unless the gap
            between them is wider than this many letter heights (two columns).
        blank_std: A frame whose grayscale standard deviation (0-255) is below this
            is blank and not read at all.
        same_text_ratio: Consecutive frames whose texts are at least this similar
            (0-1, ignoring case and spaces) count as the same text staying on screen.
        max_chars: Text that stayed on screen is split into nodes of at most this
            many characters (whole lines), to fit an embedding model's window.
    """

    min_confidence: float = 0.6
    min_glyph_size: float = 8.0
    min_line_chars: int = 2
    column_gap: float = 3.0
    blank_std: float = 4.0
    same_text_ratio: float = 0.9
    max_chars: int = 1000

    def __post_init__(self) -> None:
        if not 0 <= self.min_confidence < 1:
            raise ValueError(f"min_confidence must be in [0, 1), got {self.min_confidence}")
        if not 0 < self.same_text_ratio <= 1:
            raise ValueError(f"same_text_ratio must be in (0, 1], got {self.same_text_ratio}")
        if self.min_glyph_size < 0 or self.blank_std < 0 or self.column_gap <= 0:
            raise ValueError("need min_glyph_size >= 0, blank_std >= 0 and column_gap > 0")
        if self.min_line_chars < 1 or self.max_chars < 100:
            raise ValueError("need min_line_chars >= 1 and max_chars >= 100")
