"""``llama-index-video chapters`` and ``summarize``: a recording's chapters, for reading or
for a player, and its summary with decisions and action items, cited."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from llama_index_video.cli.options import index_option, source_argument, span_options
from llama_index_video.cli.reads import read_between_writers

CHAPTER_FORMATS = ("text", "youtube", "vtt")  # chapters.formats.FORMATS, kept light


def add_chapters_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "chapters",
        help="a recording's chapters: its topics with their times",
        description="The topical sections found in a recording at ingest (recordings of a "
        "few minutes or more), each with a short title and its span.",
    )
    source_argument(parser)
    index_option(parser)
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print JSON")
    shape.add_argument(
        "--format",
        choices=CHAPTER_FORMATS,
        default="text",
        help="text (labels and titles), youtube ('00:00 Title' lines) or vtt (WebVTT chapters)",
    )
    return parser


def run_chapters(args: argparse.Namespace, index: Any) -> int:
    from llama_index_video.chapters.formats import (
        text_lines,
        webvtt,
        youtube_lines,
        youtube_shortfall,
    )

    chapters = read_between_writers(index, lambda: index.chapters(args.source))
    if args.json:
        print(json.dumps([c.to_dict() for c in chapters], indent=2, ensure_ascii=False))
    elif not chapters:
        print(
            f"{args.source}: no chapters (too short; or indexed without them, and "
            f"'llama-index-video verify --repair --index {args.index}' makes them)"
        )
    else:
        write = {"text": text_lines, "youtube": youtube_lines, "vtt": webvtt}[args.format]
        print(write(chapters).rstrip("\n"))
        shortfall = youtube_shortfall(chapters) if args.format == "youtube" else None
        if shortfall:
            print(f"note: {shortfall}: in a description they stay text", file=sys.stderr)
    return 0


def add_summarize_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "summarize",
        help="a recording's summary: overview, decisions, action items, open questions",
        description="Summarize SOURCE (or --from/--to of it): an overview by chapter, the "
        "decisions, the action items (who said them, by when) and open questions, each "
        "line cited [file mm:ss-mm:ss]. Extractive (the recording's own sentences) unless "
        "--llm names a model to write it; a written summary is cached in the index folder.",
    )
    source_argument(parser)
    span_options(parser, required=False)
    index_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--llm",
        choices=["claude", "gemini", "none"],
        default="none",
        help="who writes the summary: claude (ANTHROPIC_API_KEY), gemini (GEMINI_API_KEY) "
        "or none (extractive, the default); a model's citations are checked, bad ones dropped",
    )
    parser.add_argument("--llm-model", default=None, help="model name for --llm")
    return parser


def run_summarize(args: argparse.Namespace, index: Any) -> int:
    from llama_index_video.answering.answerer import make_llm

    llm = make_llm(args.llm, model=args.llm_model)
    summary = read_between_writers(
        index, lambda: index.summarize(args.source, start=args.start, end=args.end, llm=llm)
    )
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(summary.to_text())
    return 0
