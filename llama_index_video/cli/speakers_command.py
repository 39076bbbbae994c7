"""``llama-index-video speakers name SOURCE SPEAKER NAME``: a person's name for a label
(and its voice kept in the index folder's voice library); ``speakers relabel
[SOURCE...]``: the voices named before, named in recordings; ``speakers list``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from llama_index_video.cli.opening import open_index
from llama_index_video.cli.options import index_option, source_argument, wait_options
from llama_index_video.errors import VideoIndexError, printable_path
from llama_index_video.speakers.base import speaker_label, speaker_order

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex


def add_speakers_parser(commands: Any) -> argparse.ArgumentParser:
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
    source_argument(name)
    name.add_argument("speaker", type=speaker_label, metavar="SPEAKER")
    name.add_argument("name", metavar="NAME")
    index_option(name)
    wait_options(name)
    relabel = actions.add_parser(
        "relabel",
        help="name the voices named before in other recordings",
        description="Give each label of SOURCE (default: every recording) whose voice "
        "matches a voice named with 'speakers name' that name; other labels stay.",
    )
    relabel.add_argument("sources", nargs="*", metavar="SOURCE")
    index_option(relabel)
    wait_options(relabel)
    listed = actions.add_parser("list", help="the named voices of the index folder")
    index_option(listed)
    return parser


def run_speakers(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    from llama_index_video.store.folder import IndexFolder
    from llama_index_video.store.voice_library import VoiceLibrary

    IndexFolder(args.index).require()
    if args.action == "list":
        voices = VoiceLibrary(args.index).voices
        for voice_name, voice in sorted(voices.items()):
            print(f"{voice_name}\t{voice.seconds:.1f} s of speech")
        if not voices:
            print("no voices named yet: llama-index-video speakers name SOURCE SPEAKER NAME")
        return 0
    index = open_index(args.index, **index_options)
    try:
        if args.action == "relabel":
            return _relabel(index, args.sources, wait=args.wait)
        units = index.name_speaker(args.source, args.speaker, args.name, wait=args.wait)
    except ValueError as exc:
        raise VideoIndexError(str(exc)) from exc
    finally:
        index.close()
    shown = printable_path(args.source)
    named = f"{args.speaker} {' '.join(args.name.split())!r} in {shown}"
    print(f"named    {named}: {units} unit{'' if units == 1 else 's'}")
    return 0


def _relabel(index: VideoIndex, sources: list[str], *, wait: float) -> int:
    done = index.relabel_speakers(sources, wait=wait)
    for shown, named in done.named.items():
        labels = sorted(named, key=speaker_order)
        names = ", ".join(f"{label} {named[label]!r}" for label in labels)
        print(f"named    {names or 'no voice known'} in {printable_path(shown)}")
    for shown, reason in done.failed.items():
        print(f"failed   {printable_path(shown)}: {reason}")
    return 1 if done.failed else 0
