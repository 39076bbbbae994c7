"""``llama-index-video transcript``: a recording's stored transcript as SRT, WebVTT, text
or JSON, to standard output or a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from llama_index_video.cli.opening import open_index
from llama_index_video.cli.options import index_option, source_argument, span_options
from llama_index_video.cli.reads import read_between_writers
from llama_index_video.errors import VideoIndexError, printable_path
from llama_index_video.store.transcript_export import TRANSCRIPT_FORMATS


def add_transcript_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "transcript",
        help="a recording's transcript as SRT, WebVTT, text or JSON",
        description="Print what was said in SOURCE, one cue per stored unit with its times, "
        "speaker and language; --from/--to keep the units overlapping that span.",
    )
    source_argument(parser)
    parser.add_argument(
        "--format", choices=TRANSCRIPT_FORMATS, default="txt", help="(default: txt)"
    )
    span_options(parser, required=False)
    parser.add_argument(
        "-o", "--output", type=Path, default=None, metavar="FILE", help="write FILE, not stdout"
    )
    index_option(parser)
    return parser


def run_transcript(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    if args.start is not None and args.end is not None and args.end <= args.start:
        raise VideoIndexError(f"{printable_path(args.source)}: --to must come after --from")
    index = open_index(args.index, must_exist=True, **index_options)
    try:
        recording = index.recording(args.source)
        text = read_between_writers(
            index,
            lambda: index.transcript_file(
                recording, fmt=args.format, start=args.start, end=args.end
            ),
        )
    finally:
        index.close()
    if args.output is None:
        sys.stdout.write(text)
    else:
        from llama_index_video.media.output import write_text

        write_text(args.output, text, sources=[Path(recording.path)])
        print(f"wrote {printable_path(args.output)}: the transcript of {recording.name}")
    return 0
