"""On-screen text of video frames: OCR backends, noise filtering and reading order.

RapidOCR is the default backend (``pip install 'llama-index-video[ocr]'``, models in
the wheel); the ``tesseract`` program is the alternative. Any object with a ``name``
and ``detect(image) -> list[TextBox]`` can stand in (:class:`OcrEngine`). Which engine
a reader uses is an engine or one of :data:`OCR_CHOICES`, resolved by :func:`ocr_engine`
(:mod:`.choice`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.ocr.base import OcrEngine, OcrOptions, ScreenText, TextBox
    from llama_index_video.ocr.choice import (
        OCR_CHOICES,
        OcrChoice,
        check_ocr_choice,
        default_ocr_engine,
        ocr_engine,
    )
    from llama_index_video.ocr.rapid import RapidOcrEngine
    from llama_index_video.ocr.screen import arrange, normalise_text, read_screen_text
    from llama_index_video.ocr.spans import ScreenTextSpan, screen_text_spans
    from llama_index_video.ocr.tesseract import TesseractEngine

_EXPORTS: dict[str, str] = {
    "OcrEngine": "llama_index_video.ocr.base",
    "OcrOptions": "llama_index_video.ocr.base",
    "ScreenText": "llama_index_video.ocr.base",
    "TextBox": "llama_index_video.ocr.base",
    "RapidOcrEngine": "llama_index_video.ocr.rapid",
    "arrange": "llama_index_video.ocr.screen",
    "normalise_text": "llama_index_video.ocr.screen",
    "read_screen_text": "llama_index_video.ocr.screen",
    "ScreenTextSpan": "llama_index_video.ocr.spans",
    "screen_text_spans": "llama_index_video.ocr.spans",
    "TesseractEngine": "llama_index_video.ocr.tesseract",
    "OCR_CHOICES": "llama_index_video.ocr.choice",
    "OcrChoice": "llama_index_video.ocr.choice",
    "check_ocr_choice": "llama_index_video.ocr.choice",
    "default_ocr_engine": "llama_index_video.ocr.choice",
    "ocr_engine": "llama_index_video.ocr.choice",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
