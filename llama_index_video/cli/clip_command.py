"""``llama-index-video clip``: cut a moment of an indexed recording into a file to share."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.cli.options import index_option, source_argument, span_options, time_option
from llama_index_video.errors import printable_path
from llama_index_video.recordings import MAX_MOMENT_SECONDS, FolderView
from llama_index_video.schema import format_timestamp, moment_label

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex


def add_clip_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "clip",
        help="cut a moment of an indexed recording into a file",
        description="Write SOURCE from --from to --to into OUTPUT (its suffix picks the "
        "format: .mp4, .mkv, .mp3, .m4a...). Packets are copied when a keyframe is within "
        "a second before the start (the clip then starts at that keyframe); otherwise, and "
        "for audio, the moment is re-encoded from the exact start. The line printed says "
        "which. "
        "--subtitles adds what was said as a subtitle track (and OUTPUT.srt); "
        "--burn-subtitles draws it onto the frames, which re-encodes.",
    )
    source_argument(parser)
    span_options(parser, required=True)
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUTPUT")
    parser.add_argument(
        "--max-seconds",
        type=time_option,
        default=MAX_MOMENT_SECONDS,
        metavar="TIME",
        help=f"refuse longer spans (default: {MAX_MOMENT_SECONDS:g})",
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--copy", dest="mode", action="store_const", const="copy", default="auto")
    how.add_argument("--reencode", dest="mode", action="store_const", const="reencode")
    said = parser.add_mutually_exclusive_group()
    said.add_argument(
        "--subtitles",
        dest="subtitles",
        action="store_const",
        const="track",
        default=None,
        help="what was said as a soft subtitle track (MP4, MOV, MKV) and in OUTPUT.srt",
    )
    said.add_argument(
        "--burn-subtitles",
        dest="subtitles",
        action="store_const",
        const="burn",
        help="what was said drawn onto the frames (re-encodes), also in OUTPUT.srt",
    )
    index_option(parser)
    return parser


def run_clip(args: argparse.Namespace, index_options: dict[str, Any]) -> int:
    """Cut the moment ``args`` name from the index ``--index`` and say how.

    Without subtitles only the manifest is read (:class:`FolderView`): no vector store,
    model or LlamaIndex is loaded for a cut.
    """
    index = _open(args, index_options)
    try:
        recording = index.recording(args.source)
        label = moment_label(recording.name, args.start, args.end)
        cues = []
        if args.subtitles and not isinstance(index, FolderView):
            from llama_index_video.cli.export_command import check_sidecar, spoken_cues

            check_sidecar(index, args.output)
            cues = spoken_cues(index, recording, args.start, args.end, label)
        report = index.cut(
            recording,
            args.start,
            args.end,
            args.output,
            mode=args.mode,
            cues=cues,
            burn=args.subtitles == "burn",
            max_seconds=args.max_seconds,
        )
    finally:
        index.close()
    how = (
        f"by stream copy from the keyframe at {report.start:.2f} s"
        if report.method == "copy"
        else "re-encoded at the cut"
    )
    line = (
        f"wrote {printable_path(args.output)}: {recording.name} "
        f"{format_timestamp(report.start)}-{format_timestamp(report.end)} "
        f"({report.duration:.2f} s) {how}"
    )
    if args.subtitles:
        from llama_index_video.cli.export_command import write_sidecar
        from llama_index_video.media.export_subtitles import shift_cues

        on_file = shift_cues(cues, report.start, length=report.duration)
        sources = [Path(recording.path)]
        line += f"; {write_sidecar(args.output, on_file, report.subtitles, sources=sources)}"
    print(line)
    return 0


def _open(args: argparse.Namespace, index_options: dict[str, Any]) -> VideoIndex | FolderView:
    """The index folder, opened as far as the clip needs: the transcript for subtitles."""
    if not args.subtitles:
        return FolderView(args.index)
    from llama_index_video.cli.opening import open_index

    return open_index(args.index, must_exist=True, **index_options)
