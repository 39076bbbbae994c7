"""The ``search`` command: the best moments for a query, printed or as JSON.

A ``search`` is a process of its own that reads the index once, so what it costs is
mostly starting: it asks a ``serve`` running over the same folder if there is one
(:mod:`llama_index_video.cli.warm_search`), else searches the folder without LlamaIndex
or ``chromadb``'s Python layer (:mod:`llama_index_video.search.one_shot`), else, for a
folder that way does not serve or while a writer changes it, opens ``VideoIndex`` as
every reader does. The hits are the same whichever way found them.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from llama_index_video.cli.opening import open_index, search_options, store_options
from llama_index_video.cli.reads import Folder, read_between_writers, read_once
from llama_index_video.cli.warm_search import served_search
from llama_index_video.errors import EmbeddingError, MomentRequestError, RemoteAPIError
from llama_index_video.speakers.base import speaker_order, unknown_speakers

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.results import SearchHit
    from llama_index_video.store.library import LibraryEntry

T = TypeVar("T")
logger = logging.getLogger(__name__)


def run_search(args: argparse.Namespace) -> int:
    """``search``: print the hits (``--json``: as JSON)."""
    settings = {**search_options(args), **store_options(args)}
    hits = None
    if not (
        args.speaker or args.language or args.by_chapter or args.by_named_speaker or args.source
    ):
        hits = served_search(
            args.index, args.query, settings=settings, top_k=args.top_k, modalities=args.modality
        )
    if hits is None:
        hits = _searched(args, settings)
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No relevant moments.")
    for rank, hit in enumerate(hits, start=1):
        speaker = f" {hit.speaker}" if hit.speaker else ""
        chapter = f" [{hit.chapter}]" if hit.chapter and args.by_chapter else ""
        print(f"{rank}. {hit.label} {hit.modality}{speaker} score={hit.score}{chapter}")
        print(f"   {hit.text}")
        if hit.url:
            print(f"   play: {hit.url}")
        if hit.frame_path:
            print(f"   frame: {hit.frame_path}")
    return 0


def _searched(args: argparse.Namespace, settings: dict[str, Any]) -> list[SearchHit]:
    """``search``'s hits from the index folder itself: without LlamaIndex when
    :func:`~llama_index_video.search.one_shot.one_shot_search` serves the folder, else
    through ``VideoIndex`` over Chroma's engine alone
    (:mod:`llama_index_video.store.chroma_reader`), else, if that cannot open the folder
    or a writer changed it meanwhile, as every reader opens it."""
    from llama_index_video.recordings import FolderView
    from llama_index_video.search.one_shot import one_shot_search

    view = FolderView(args.index)
    try:  # the index's speakers and languages, from the manifest alone, for a search
        # that names some
        named = args.speaker or args.by_named_speaker or args.language
        entries = view.listed() if named else []
        hits = None
        if entries is not None:
            speakers = sorted(_speakers(entries), key=speaker_order)
            hits = _first_try(
                view,
                lambda: one_shot_search(
                    args.index,
                    args.query,
                    **settings,
                    **_asked(args),
                    known_speakers=lambda: speakers,
                ),
            )
    finally:
        view.close()
    if hits is not None and entries is not None:
        _say_if_unlabelled(args, entries, hits)
        return hits
    from llama_index_video.store.chroma_reader import one_shot_reader

    reader = one_shot_reader(
        args.index, chroma_url=settings["chroma_url"], collection=settings["collection"]
    )
    if reader is not None:
        index = open_index(args.index, vector_store=reader, **settings)
        try:
            hits = _first_try(index, lambda: _hits(index, args))
            if hits is not None:
                _say_if_unlabelled(args, index.library(), hits)
                return hits
        finally:
            index.close()
    index = open_index(args.index, **settings)
    try:
        hits = read_between_writers(index, lambda: _hits(index, args))
        _say_if_unlabelled(args, index.library(), hits)
        return hits
    finally:
        index.close()


def _first_try(folder: Folder, read: Callable[[], T | None]) -> T | None:
    """``read()`` of a way that may not serve the folder: None when it does not (it
    returned None), a writer changed the folder meanwhile, or it failed (the next way
    then says why); the question's own failures (a paid API refusing it, a bad filter)
    are raised, as asking again would repeat them."""
    try:
        return read_once(folder, read)
    except (EmbeddingError, MomentRequestError, RemoteAPIError):
        raise
    except Exception as exc:
        logger.debug("%s: read another way after %s: %s", folder.path, type(exc).__name__, exc)
        return None


def _hits(index: VideoIndex, args: argparse.Namespace) -> list[SearchHit]:
    return index.search(args.query, **_asked(args))


def _asked(args: argparse.Namespace) -> dict[str, Any]:
    """What ``search`` asks for, as ``VideoIndex.search`` takes it."""
    return {
        "top_k": args.top_k,
        "modalities": args.modality,
        "speakers": args.speaker,
        "languages": args.language,
        "by_chapter": args.by_chapter,
        "by_named_speaker": args.by_named_speaker,
        "sources": args.source,
    }


def _speakers(entries: list[LibraryEntry]) -> set[str]:
    return {speaker for entry in entries for speaker in entry.speakers}


def _say_if_unlabelled(
    args: argparse.Namespace, entries: list[LibraryEntry], hits: list[SearchHit]
) -> None:
    """A note on stderr when the speakers or languages a search names explain what it
    found: no speaker labelled in the index (``entries``), or nothing found and none by
    the names ``--speaker`` gave or in the languages ``--language`` gave."""
    from llama_index_video.search.searcher import filters_unmet

    if args.language and not hits and (note := filters_unmet(entries, languages=args.language)):
        print(f"note: {note}", file=sys.stderr)
    known = _speakers(entries)
    if not args.by_named_speaker and not (args.speaker and not hits):
        return
    if not known:
        print(
            "note: this index has no speaker labels (they are made by 'ingest --speakers'), "
            + (
                "so every moment was searched"
                if args.by_named_speaker
                else "so --speaker finds nothing"
            ),
            file=sys.stderr,
        )
    elif note := unknown_speakers(args.speaker or [], known):
        print(f"note: {note}", file=sys.stderr)
