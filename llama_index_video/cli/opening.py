"""How a command opens the index folder: the store it names (``--chroma-url``,
``--collection``), the search settings it asks for (``--relevance``, ``--lexical``),
and whether the folder must already be an index."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex


def open_index(path: Path, *, must_exist: bool = False, **options: object) -> VideoIndex:
    """The index at ``path`` opened with ``options`` (``VideoIndex``'s keywords).

    Raises:
        VideoIndexError: ``must_exist`` and ``path`` is not an index folder.
    """
    from llama_index_video.index import VideoIndex
    from llama_index_video.store.folder import IndexFolder

    if must_exist:
        IndexFolder(path).require()

    return VideoIndex(path, **options)  # type: ignore[arg-type]


def store_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--chroma-url`` and ``--collection`` as ``VideoIndex`` takes them."""
    return {"chroma_url": args.chroma_url, "collection": args.collection}


def search_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--relevance`` and ``--lexical`` as ``VideoIndex`` takes them."""
    relevance = None if args.relevance == "off" else str(args.relevance)
    return {"relevance": relevance, "lexical": args.lexical == "on"}
