"""``llama-index-video chapters``: a recording's chapters, for reading or for a player."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

CHAPTER_FORMATS = ("text", "youtube", "vtt")  # chapters.formats.FORMATS, kept light


def add_chapters_parser(
    commands: Any, index_option: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "chapters",
        help="a recording's chapters: its topics with their times",
        description="The topical sections found in a recording at ingest (recordings of a "
        "few minutes or more), each with a short title and its span.",
    )
    parser.add_argument("source", metavar="SOURCE", help="an indexed path, link or file name")
    index_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--format",
        choices=CHAPTER_FORMATS,
        default="text",
        help="text (labels and titles), youtube ('00:00 Title' lines) or vtt (WebVTT chapters)",
    )
    return parser


def run_chapters(args: argparse.Namespace, index: Any) -> int:
    from llama_index_video.chapters.formats import text_lines, webvtt, youtube_lines

    chapters = index.chapters(args.source)
    if args.json:
        print(json.dumps([c.to_dict() for c in chapters], indent=2, ensure_ascii=False))
    elif not chapters:
        print(f"{args.source}: no chapters (too short, or indexed without them)")
    else:
        write = {"text": text_lines, "youtube": youtube_lines, "vtt": webvtt}[args.format]
        print(write(chapters).rstrip("\n"))
    return 0
