"""The command line's commands: each turns parsed arguments into options, calls the
library and prints; :mod:`llama_index_video.cli.main` runs them and turns errors into
one line and an exit status.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.cli.clip_command import run_clip
from llama_index_video.cli.ingest_command import print_report, reading_index, run_ingest
from llama_index_video.cli.mcp_command import run_mcp
from llama_index_video.cli.meeting_commands import run_chapters, run_summarize
from llama_index_video.cli.opening import open_index, search_options, store_options
from llama_index_video.cli.reads import read_between_writers
from llama_index_video.cli.search_command import run_search
from llama_index_video.cli.speakers_command import run_speakers
from llama_index_video.cli.status import EXIT_FAILED_FILES
from llama_index_video.cli.transcript_command import run_transcript
from llama_index_video.errors import (
    VideoIndexError,
)
from llama_index_video.schema import format_timestamp

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.store.library import LibraryEntry


def _verify(args: argparse.Namespace) -> int:
    from llama_index_video.cli.progress import ProgressBars
    from llama_index_video.store.folder import IndexFolder
    from llama_index_video.store.integrity import set_aside_damaged

    IndexFolder(args.index).require()
    for damaged, kept in set_aside_damaged(args.index, wait=args.wait) if args.repair else []:
        print(f"damaged: {damaged}: not a database; moved aside to {kept}, rebuilt below")
    index = reading_index(args)
    bars = ProgressBars(enabled=not args.quiet and sys.stderr.isatty())
    try:
        check, report = index.verify(repair=args.repair, progress=bars, wait=args.wait)
    finally:
        bars.close()
        index.close()
    if check.manifest_lost:
        print(
            f"the manifest lists no file, but the vector store holds {check.manifest_lost} "
            "moments: the manifest was emptied or lost"
            + (" (recorded again from them)" if args.repair else "; --repair records them again")
        )
    for source in check.sources:
        found = "?" if source.found is None else str(source.found)
        state = "ok"
        if source.missing:
            state = f"{source.missing} missing"
        elif source.lost_frames:
            state = f"{source.lost_frames} frames lost"
        empty = f" ({source.notes})" if not source.expected and source.notes else ""
        print(f"{state:12} {source.expected:6} listed {found:>6} stored  {source.source}{empty}")
    problems = {
        "stray rows (of no indexed file)": sum(len(ids) for ids in check.stray_rows.values()),
        "orphan frames and clips": len(check.orphan_media),
        "partial files": len(check.partial_files),
        "interrupted files": len(check.interrupted),
        "unfinished removals": len(check.removals),
        "indexed contents no file names (left by an interrupted run)": len(check.unnamed),
        "files with missing moments or frames": len(check.damaged),
    }
    for what, count in problems.items():
        if count:
            print(f"{what}: {count}" + (" (deleted)" if args.repair else ""))
    if check.to_reindex:
        print(
            f"files taken out to be indexed again, not back yet: {len(check.to_reindex)}"
            + (" (indexed again)" if args.repair else "")
        )
    unreachable = sum(len(ids) for ids in check.unreachable.values())
    if unreachable:
        print(
            f"unreachable rows (stored, but search cannot find them): {unreachable}"
            + (" (embedded again)" if args.repair else "")
        )
    if check.lexical is not None and not check.lexical.ok:
        print(f"lexical index: {check.lexical}" + (" (rebuilt)" if args.repair else ""))
    if check.unchaptered:
        print(
            f"long recordings without chapters: {len(check.unchaptered)}"
            + (" (made from their stored units)" if args.repair else "; --repair makes them")
        )
    if check.voices:
        print(f"not repaired: {check.voices}")
    if not check.counted:
        print("this vector store cannot count its rows; only the media folder was checked")
    if report is not None:
        print_report(report, args.index)
        return 0 if report.ok else EXIT_FAILED_FILES
    if check.ok:
        print(
            f"ok: {len(check.sources)} files, everything the manifest lists is stored "
            "and found by search"
        )
        return 0
    print(f"problems found; run 'llama-index-video verify --repair --index {args.index}'")
    return EXIT_FAILED_FILES


def _list(args: argparse.Namespace) -> int:
    from dataclasses import asdict
    from datetime import datetime, timezone

    entries = _library(args)
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print("The index is empty.")
    for entry in entries:
        when = (
            datetime.fromtimestamp(entry.indexed_at, timezone.utc).strftime("%Y-%m-%d %H:%M")
            if entry.indexed_at
            else "?"
        )
        length = format_timestamp(entry.duration) if entry.duration is not None else "-"
        moments = ", ".join(f"{n} {kind}" for kind, n in sorted(entry.moments.items()))
        details = [length, moments or "no moments", entry.language or "", ", ".join(entry.speakers)]
        print(f"{entry.status:8} {entry.source}")
        print(f"         {' · '.join(d for d in details if d)} · {when} UTC")
        if entry.reason and (entry.status != "indexed" or not entry.moments):
            print(f"         {entry.reason}")
    return 0


def _library(args: argparse.Namespace) -> list[LibraryEntry]:
    """The index's library, from its manifest alone when that can tell (a cold ``list``
    loads no vector store or LlamaIndex), else from the whole index."""
    from llama_index_video.recordings import FolderView

    if args.chroma_url is None:
        view = FolderView(args.index)
        try:
            entries = view.listed()
        finally:
            view.close()
        if entries is not None:
            return entries
    index = open_index(args.index, must_exist=True, **store_options(args))
    try:
        return index.library()
    finally:
        index.close()


def _remove(args: argparse.Namespace) -> int:
    index = open_index(args.index, must_exist=True, **store_options(args))
    missing = 0
    try:
        for source in args.sources:
            if index.remove(source, wait=args.wait):
                print(f"{'removed':8} {source}")
            else:
                print(f"{'unknown':8} {source} (not in the index)", file=sys.stderr)
                missing += 1
    finally:
        index.close()
    return EXIT_FAILED_FILES if missing else 0


def _ask(args: argparse.Namespace) -> int:
    from llama_index_video.answering.answerer import AskOptions, make_llm, make_reranker

    llm = make_llm(args.llm, model=args.llm_model)
    if args.queries > 1 and llm is None:
        raise VideoIndexError("--queries needs a language model (--llm claude or gemini)")
    if args.burn_subtitles and not args.export:
        raise VideoIndexError("--burn-subtitles needs --export FILE")
    reranker = make_reranker(args.rerank, top_n=args.top_k) if args.rerank else None
    index = open_index(args.index, must_exist=True, **search_options(args), **store_options(args))
    options = AskOptions(top_k=args.top_k, num_queries=args.queries)
    try:
        stream = read_between_writers(  # the moments are found before the answer is written
            index,
            lambda: index.answerer(
                llm=llm,
                options=options,
                reranker=reranker,
                languages=args.language,
                speakers=args.speaker,
                by_named_speaker=args.by_named_speaker,
            ).stream(args.question, streaming=not args.no_stream and not args.json),
        )
        for delta in stream:
            if not args.json:
                print(delta, end="", flush=True)
        answer = stream.answer
        exported = (
            _export(index, answer, args.export, burn=args.burn_subtitles) if args.export else None
        )
    finally:
        index.close()
    if not args.json:
        print(flush=True)  # the answer's line ends before anything else is written
    if exported:
        print(exported, file=sys.stderr)
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
        return 0
    if llm is not None and answer.citations:
        print("\nCited moments:")
        for citation in answer.citations:
            frame = f"  frame: {citation.frame_path}" if citation.frame_path else ""
            print(f"  {citation.label} play: {citation.url}{frame}")
    if answer.unverified:
        print(f"\nNot among the retrieved moments: {', '.join(answer.unverified)}")
    return 0


def _export(index: VideoIndex, answer: Any, output: Path, *, burn: bool) -> str:
    from llama_index_video.cli.export_command import export_answer

    return export_answer(index, answer, output, burn=burn)


def _watch(args: argparse.Namespace) -> int:
    from llama_index_video.cli.watch_command import run_watch

    index = reading_index(args)
    try:
        return run_watch(args, index)
    finally:
        index.close()


def _serve(args: argparse.Namespace) -> int:
    from llama_index_video.cli.watch_command import watching
    from llama_index_video.service.server import serve

    with watching(args.watch or [], args.index, store_options(args)):
        serve(
            args.index,
            host=args.host,
            port=args.port,
            token=args.token,
            llm=args.llm,
            llm_model=args.llm_model,
            **search_options(args),
            **store_options(args),
        )
    return 0


def _chapters(args: argparse.Namespace) -> int:
    index = open_index(args.index, must_exist=True, **store_options(args))
    try:
        return run_chapters(args, index)
    finally:
        index.close()


def _summarize(args: argparse.Namespace) -> int:
    index = open_index(args.index, must_exist=True, **store_options(args))
    try:
        return run_summarize(args, index)
    finally:
        index.close()


COMMANDS = {  # subcommand -> its function
    "ingest": run_ingest,
    "watch": _watch,
    "list": _list,
    "remove": _remove,
    "search": run_search,
    "ask": _ask,
    "serve": _serve,
    "mcp": lambda args: run_mcp(args, store_options(args)),
    "clip": lambda args: run_clip(args, store_options(args)),
    "transcript": lambda args: run_transcript(args, store_options(args)),
    "speakers": lambda args: run_speakers(args, store_options(args)),
    "verify": _verify,
    "chapters": _chapters,
    "summarize": _summarize,
}
