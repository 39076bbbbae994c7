"""How long text stayed on screen: consecutive frames showing the same text, merged.

Each kept frame spans until the next kept one (:class:`~llama_index_video.media.frames.Frame`),
so a run of consecutive frames whose texts match spans from the first frame's time to
the last one's end. Texts match when they are equal or nearly so ignoring case and
spaces (OCR of one slide can differ by a character between two frames); a frame
showing no text, or other text, ends the run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.ocr.base import ScreenText

if TYPE_CHECKING:
    from llama_index_video.media.frames import Frame


@dataclass(frozen=True)
class ScreenTextSpan:
    """Text that stayed on screen from ``start`` to ``end`` (seconds).

    Attributes:
        start: When the text appeared (the first frame's time).
        end: When it left the screen (the last frame's end).
        lines: The text's lines in reading order, as read on the first frame.
        frame_time: Time of the frame the text was read from.
        frame_path: That frame's image file.
    """

    start: float
    end: float
    lines: tuple[str, ...]
    frame_time: float
    frame_path: Path

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def screen_text_spans(
    reads: Iterable[tuple[Frame, ScreenText]], *, same_text_ratio: float = 0.9
) -> Iterator[ScreenTextSpan]:
    """Merge consecutive frames that show the same text into spans, in time order.

    Args:
        reads: Every kept frame in time order with the text read from it (empty
            when it shows none).
        same_text_ratio: How similar (0-1, ignoring case and spaces) two frames'
            texts must be to count as the same text.
    """
    current: ScreenTextSpan | None = None
    for frame, screen in reads:
        if current is not None and _same(current.lines, screen.lines, same_text_ratio):
            current = replace(current, end=frame.end)
            continue
        if current is not None:
            yield current
        current = (
            ScreenTextSpan(frame.time, frame.end, screen.lines, frame.time, frame.path)
            if screen.lines
            else None
        )
    if current is not None:
        yield current


def _same(a: tuple[str, ...], b: tuple[str, ...], ratio: float) -> bool:
    key_a, key_b = _key(a), _key(b)
    if not key_b or key_a == key_b:
        return bool(key_b)
    return difflib.SequenceMatcher(None, key_a, key_b, autojunk=False).ratio() >= ratio


def _key(lines: tuple[str, ...]) -> str:
    return "".join("".join(lines).casefold().split())
