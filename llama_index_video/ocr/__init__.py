"""On-screen text of video frames: OCR backends, noise filtering and reading order.

RapidOCR is the default backend (``pip install 'llama-index-video[ocr]'``, models in
the wheel); the ``tesseract`` program is the alternative. Any object with a ``name``
and ``detect(image) -> list[TextBox]`` can stand in (:class:`OcrEngine`).
"""

from __future__ import annotations

import logging

from llama_index_video.ocr.base import OcrEngine, OcrOptions, ScreenText, TextBox
from llama_index_video.ocr.rapid import RapidOcrEngine, rapidocr_available
from llama_index_video.ocr.screen import arrange, normalise_text, read_screen_text
from llama_index_video.ocr.spans import ScreenTextSpan, screen_text_spans
from llama_index_video.ocr.tesseract import TesseractEngine

logger = logging.getLogger(__name__)

__all__ = [
    "OcrEngine",
    "OcrOptions",
    "RapidOcrEngine",
    "ScreenText",
    "ScreenTextSpan",
    "TesseractEngine",
    "TextBox",
    "arrange",
    "default_ocr_engine",
    "normalise_text",
    "read_screen_text",
    "screen_text_spans",
]


def default_ocr_engine() -> OcrEngine | None:
    """RapidOCR when it is installed; otherwise ``None`` (OCR off), said once in the log."""
    if rapidocr_available():
        return RapidOcrEngine()
    logger.info(
        "on-screen text is not read: rapidocr-onnxruntime is not installed "
        "(pip install 'llama-index-video[ocr]')"
    )
    return None
