"""The options several subcommands share, defined once: the index folder and its store,
waiting for another writer, the recording a command is about (``SOURCE``, and a span of
it by ``--from``/``--to``); and the types that check their values."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from llama_index_video.schema import parse_time
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS


def index_option(parser: argparse.ArgumentParser) -> None:
    """``--index`` and where its vectors are: ``--chroma-url``, ``--collection``."""
    parser.add_argument(
        "--index",
        type=Path,
        default=Path(os.environ.get("LLAMA_INDEX_VIDEO_INDEX", "video_index")),
        help="index folder (default: ./video_index, or $LLAMA_INDEX_VIDEO_INDEX)",
    )
    parser.add_argument(
        "--chroma-url",
        default=os.environ.get("LLAMA_INDEX_VIDEO_CHROMA_URL") or None,
        metavar="URL",
        help="a Chroma server (http://host:8000) holding the vectors; the index folder keeps "
        "the manifest and frames, and remembers the URL (default: $LLAMA_INDEX_VIDEO_CHROMA_URL; "
        "token from $LLAMA_INDEX_VIDEO_CHROMA_TOKEN)",
    )
    parser.add_argument(
        "--collection",
        default=None,
        metavar="NAME",
        help="Chroma collection of the index, one per index on a shared server "
        "(default: the one the folder recorded, else video_moments)",
    )


def wait_options(parser: argparse.ArgumentParser) -> None:
    """``--wait SECONDS`` or ``--no-wait``: how long a writer waits for another."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--wait",
        type=seconds,
        default=DEFAULT_WAIT_SECONDS,
        metavar="SECONDS",
        help="if another process is writing to the index, wait this long for it "
        f"(default: {DEFAULT_WAIT_SECONDS:.0f})",
    )
    group.add_argument(
        "--no-wait",
        dest="wait",
        action="store_const",
        const=0.0,
        help="fail at once if another process is writing to the index",
    )


def seconds(text: str) -> float:
    """A duration option: seconds, from 0 to a week."""
    value = float(text)
    if not 0 <= value <= 7 * 24 * 3600:
        raise argparse.ArgumentTypeError("must be between 0 and 604800 seconds")
    return value


def source_argument(parser: argparse.ArgumentParser) -> None:
    """``SOURCE``: the recording a command is about."""
    parser.add_argument("source", metavar="SOURCE", help="an indexed path, link or file name")


def span_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """``--from``/``--to``: the span of ``SOURCE`` a command is about."""
    parser.add_argument(
        "--from",
        dest="start",
        type=time_option,
        required=required,
        metavar="TIME",
        help="where the span starts: seconds (94.5) or mm:ss (01:34)"
        + ("" if required else "; default: the start"),
    )
    parser.add_argument(
        "--to",
        dest="end",
        type=time_option,
        required=required,
        metavar="TIME",
        help="where the span ends" + ("" if required else "; default: the end"),
    )


def time_option(text: str) -> float:
    """A time option (``--from``, ``--to``, ``--max-seconds``): seconds or mm:ss, finite."""
    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
