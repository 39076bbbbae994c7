"""Chapters: a long recording's topical sections, made at ingest without a model call.

:mod:`.segment` finds where the topic changes (the units' vectors, TextTiling-style),
:mod:`.titles` names each section by its key phrases, :mod:`.nodes` stores chapters as
nodes of their own and reads them back (as :class:`~llama_index_video.results.Chapter`),
:mod:`.formats` writes them as YouTube chapter lines or WebVTT. The index's ingest
(:class:`~llama_index_video.store.ingest.Ingestor`) is handed
:func:`~llama_index_video.chapters.nodes.add_chapters` by ``VideoIndex``: the store
never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.results import Chapter

_EXPORTS: dict[str, str] = {
    "Chapter": "llama_index_video.results",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
