"""``llama-index-video speakers name SOURCE SPEAKER NAME``: a person's name for a label."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from llama_index_video.errors import VideoIndexError, printable_path
from llama_index_video.speakers.base import speaker_label

Adder = Callable[[argparse.ArgumentParser], None]


def add_speakers_parser(
    commands: Any, index_option: Adder, wait_options: Adder
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "speakers",
        help="name the speakers of a recording",
        description="Speaker labels (SPEAKER_1, SPEAKER_2...) are per recording; give one "
        "a person's name.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    name = actions.add_parser(
        "name",
        help="call a speaker of a recording by a name",
        description="Write NAME as the speaker of every unit SPEAKER said in SOURCE: search "
        "--speaker NAME, hits, answers, transcripts, the library and the tools show it. "
        "SPEAKER is a label (SPEAKER_2 or 2) or a name given before (to rename).",
    )
    name.add_argument("source", metavar="SOURCE", help="an indexed path, link or file name")
    name.add_argument("speaker", type=speaker_label, metavar="SPEAKER")
    name.add_argument("name", metavar="NAME")
    index_option(name)
    wait_options(name)
    return parser


def run_speakers(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    from llama_index_video.index import VideoIndex
    from llama_index_video.store.folder import IndexFolder

    IndexFolder(args.index).require()
    index = VideoIndex(args.index, **index_options)
    try:
        units = index.name_speaker(args.source, args.speaker, args.name, wait=args.wait)
    except ValueError as exc:
        raise VideoIndexError(str(exc)) from exc
    finally:
        index.close()
    shown = printable_path(args.source)
    print(f"named    {args.speaker} {' '.join(args.name.split())!r} in {shown}: {units} units")
    return 0
