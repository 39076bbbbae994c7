"""Summaries of a recording: an overview, decisions, action items and open questions,
every line cited to its moment.

:mod:`.summary` holds what a summary is (:class:`Summary`, :class:`SummaryLine`) and the
check that a citation points at a stored moment; :mod:`.extractive` writes one from the
recording's own sentences, with no language model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.summaries.summary import Summary, SummaryLine

_EXPORTS: dict[str, str] = {
    "Summary": "llama_index_video.summaries.summary",
    "SummaryLine": "llama_index_video.summaries.summary",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
