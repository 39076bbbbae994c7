"""RapidOCR (PP-OCRv4 on onnxruntime): the default OCR backend, offline and on the CPU.

The ``rapidocr-onnxruntime`` wheel carries its detection, direction and recognition
models, so nothing is downloaded; its direction classifier reads rotated text such
as a vertical axis label. The engine loads on first use and is cached per setting.

Its recogniser often loses the spaces between English words ("Signedby197countries"),
which leaves words an embedding model cannot recognise. The space is not lost in the
model: in the gap between two words the space symbol scores just below CTC's blank.
So the recogniser's output is decoded again here (greedy CTC, as RapidOCR does), with
a space wherever the space's probability inside a gap reaches ``space_threshold``.
On the example slides that probability stays under 0.01 inside words and reaches
0.02-0.4 between them; 0.015 restores every space there and adds none.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_video.errors import MissingDependencyError
from llama_index_video.ocr.base import TextBox

logger = logging.getLogger(__name__)

DEFAULT_SPACE_THRESHOLD = 0.015
DEFAULT_DETECTION_SIDE = 512


def rapidocr_available() -> bool:
    """Whether ``rapidocr-onnxruntime`` is installed (without importing it)."""
    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


class RapidOcrEngine:
    """OCR with RapidOCR.

    Args:
        threads: CPU threads onnxruntime may use per model; ``None`` lets it choose
            (all cores). One is the default: the reader reads frames while speech is
            transcribed, and on 2 cores onnxruntime's extra threads only spin against
            CTranslate2's (11 example frames: 6.7 CPU s with one thread, 10.7 with two,
            and no faster on their own on a loaded machine).
        angle_classifier: Detect and read rotated (e.g. vertical) text.
        space_threshold: Restore a space between words when its probability reaches
            this (see the module docstring); ``None`` keeps RapidOCR's own decoding.
        detection_side: A frame whose shorter side is below this many pixels is
            enlarged to it for text detection (larger frames are detected as they are).
            RapidOCR's own 736 makes a 640x360 frame 4.2 times as many pixels; 512 read
            the very same lines on the 11 example frames with 38 % less CPU time and
            less memory (``benchmarks/ingest_vs_naive.py``, docs/benchmarks.md).

    Raises:
        MissingDependencyError: ``rapidocr-onnxruntime`` is not installed.
    """

    name = "rapidocr"

    def __init__(
        self,
        *,
        threads: int | None = 1,
        angle_classifier: bool = True,
        space_threshold: float | None = DEFAULT_SPACE_THRESHOLD,
        detection_side: int = DEFAULT_DETECTION_SIDE,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if space_threshold is not None and not 0 < space_threshold < 1:
            raise ValueError(f"space_threshold must be in (0, 1), got {space_threshold}")
        if detection_side < 32:
            raise ValueError(f"detection_side must be >= 32, got {detection_side}")
        if not rapidocr_available():
            raise MissingDependencyError("rapidocr-onnxruntime", "ocr", "Reading on-screen text")
        self.threads = threads
        self.angle_classifier = angle_classifier
        self.space_threshold = space_threshold
        self.detection_side = detection_side

    def detect(self, image: Path) -> list[TextBox]:
        """Every text box RapidOCR finds in ``image``."""
        engine = _load(self.threads, self.space_threshold, self.detection_side)
        result, _ = engine(str(image), use_cls=self.angle_classifier)
        return [_box(points, text, score) for points, text, score in result or ()]


@functools.lru_cache(maxsize=4)
def _load(threads: int | None, space_threshold: float | None, detection_side: int) -> Any:
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(
        intra_op_num_threads=threads or -1,
        inter_op_num_threads=1 if threads else -1,
        det_limit_side_len=detection_side,
    )
    if space_threshold is not None:
        recogniser = engine.text_rec
        recogniser.postprocess_op = _SpacedDecoder(recogniser.postprocess_op, space_threshold)
    logger.debug("RapidOCR loaded (threads=%s)", threads or "all")
    return engine


class _SpacedDecoder:
    """Greedy CTC decoding that keeps the spaces RapidOCR's decoder drops.

    Stands in for RapidOCR's ``CTCLabelDecode`` and returns what it returns:
    ``(text, mean confidence)`` per row of ``preds`` (batch, time, classes).
    """

    def __init__(self, original: Any, threshold: float) -> None:
        self._original = original
        self._characters: list[str] = original.character
        self._space: int = original.dict[" "]
        self._threshold = threshold

    def __call__(
        self, preds: np.ndarray, return_word_box: bool = False, **kwargs: Any
    ) -> list[tuple[str, float]]:
        if return_word_box:  # word boxes need RapidOCR's own bookkeeping
            return list(self._original(preds, return_word_box, **kwargs))
        return [self._decode(row) for row in preds]

    def _decode(self, row: np.ndarray) -> tuple[str, float]:
        best = row.argmax(axis=1)
        chars: list[str] = []
        confidences: list[float] = []
        space_in_gap = 0.0
        previous = 0
        for step, index in enumerate(best):
            if index in (0, self._space):  # the blank or a space: a gap between characters
                space_in_gap = max(space_in_gap, float(row[step, self._space]))
            elif index != previous:
                if chars and space_in_gap >= self._threshold:
                    chars.append(" ")
                chars.append(self._characters[index])
                confidences.append(float(row[step, index]))
                space_in_gap = 0.0
            previous = index
        return "".join(chars), float(np.mean(confidences)) if confidences else 0.0


def _box(points: list[list[float]], text: str, score: float) -> TextBox:
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    return TextBox(
        text=text,
        confidence=float(score),
        left=min(xs),
        top=min(ys),
        width=max(xs) - min(xs),
        height=max(ys) - min(ys),
    )
