"""Which OCR engine a reader uses: an engine, or one of :data:`OCR_CHOICES` by name."""

from __future__ import annotations

import logging
from typing import Final, Literal

from llama_index_video.ocr.base import OcrEngine
from llama_index_video.ocr.rapid import RapidOcrEngine, rapidocr_available
from llama_index_video.ocr.tesseract import TesseractEngine

logger = logging.getLogger(__name__)

OcrChoice = Literal["auto", "rapidocr", "tesseract", "off"]
OCR_CHOICES: Final[tuple[OcrChoice, ...]] = ("auto", "rapidocr", "tesseract", "off")


def default_ocr_engine() -> OcrEngine | None:
    """RapidOCR when it is installed; otherwise ``None`` (OCR off), said once in the log."""
    if rapidocr_available():
        return RapidOcrEngine()
    logger.info(
        "on-screen text is not read: rapidocr-onnxruntime is not installed "
        "(pip install 'llama-index-video[ocr]')"
    )
    return None


def check_ocr_choice(choice: object) -> None:
    """Fail unless ``choice`` is an :class:`OcrEngine` or one of :data:`OCR_CHOICES`.

    Raises:
        ValueError: an unknown name.
        TypeError: neither a name nor an engine (``True``/``False``/``None`` included).
    """
    if isinstance(choice, str):
        if choice not in OCR_CHOICES:
            raise ValueError(f"ocr must be one of {', '.join(OCR_CHOICES)}, got {choice!r}")
    elif not isinstance(choice, OcrEngine):
        raise TypeError(
            f"ocr must be an OcrEngine or one of {', '.join(OCR_CHOICES)}, "
            f"got {type(choice).__name__}"
        )


def ocr_engine(choice: OcrEngine | OcrChoice) -> OcrEngine | None:
    """The engine ``choice`` names: ``"auto"`` is RapidOCR when installed, else none;
    ``"rapidocr"`` and ``"tesseract"`` require theirs; ``"off"`` is none; an engine is itself.

    Raises:
        MissingDependencyError: the named engine is not installed.
        ValueError, TypeError: see :func:`check_ocr_choice`.
    """
    check_ocr_choice(choice)
    if not isinstance(choice, str):
        return choice
    if choice == "off":
        return None
    if choice == "rapidocr":
        return RapidOcrEngine()
    if choice == "tesseract":
        return TesseractEngine()
    return default_ocr_engine()
