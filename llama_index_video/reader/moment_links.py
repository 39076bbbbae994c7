"""Which transcript unit, frame and on-screen text belong together: the rules the reader
links moments by (:func:`~llama_index_video.reader.moments.link_moments`), which search
applies again to nodes stored without links
(:mod:`llama_index_video.postprocessing.context`). They read only nodes' ids and
metadata, so they work on LlamaIndex nodes and on plain rows alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index_video import schema
from llama_index_video.stored import Moment


def shows_text(frame: Moment, text: Moment) -> bool:
    """Whether the ``ocr`` node ``text`` is what was read on ``frame``.

    Text spans the frames that showed it (from the first one's time to the last one's
    end, see :mod:`llama_index_video.ocr.spans`), so each frame is inside at most one span.
    """
    start = frame.metadata[schema.START_S]
    return (
        text.metadata.get(schema.CONTENT_HASH) == frame.metadata.get(schema.CONTENT_HASH)
        and text.metadata[schema.START_S] <= start < text.metadata[schema.END_S]
    )


def screen_text_ids(frame: Moment) -> list[str]:
    """The ids of the ``ocr`` nodes read on ``frame`` (see
    :func:`~llama_index_video.reader.moments.link_moments`)."""
    return str(frame.metadata.get(schema.OCR_IDS) or "").split()


def closest(node: Moment, candidates: Sequence[Moment], *, by_overlap: bool) -> str:
    """Id of the candidate overlapping ``node`` most (or covering its start), else nearest."""
    if not candidates:
        return ""
    start, end = node.metadata[schema.START_S], node.metadata[schema.END_S]

    def overlap(other: Moment) -> float:
        lo, hi = other.metadata[schema.START_S], other.metadata[schema.END_S]
        if not by_overlap:  # the one spoken when the picture appeared
            return 1.0 if lo <= start <= hi else 0.0
        return max(0.0, min(end, hi) - max(start, lo))

    def distance(other: Moment) -> float:
        lo, hi = other.metadata[schema.START_S], other.metadata[schema.END_S]
        return max(lo - end, start - hi, 0.0)

    best = max(candidates, key=lambda c: (overlap(c), -distance(c)))
    return best.node_id
