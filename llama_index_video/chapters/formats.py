"""Chapters written for elsewhere: YouTube's description lines and WebVTT chapters.

YouTube reads ``00:00 Title`` lines from a description, the first at ``00:00``; WebVTT
chapter tracks (``<track kind="chapters">``) are cues whose text is the title.
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index_video import schema
from llama_index_video.results import Chapter
from llama_index_video.store.transcript_export import vtt_time

FORMATS = ("text", "youtube", "vtt")


def youtube_lines(chapters: Sequence[Chapter]) -> str:
    """``00:00 Title`` per chapter; the first starts at ``00:00`` as YouTube requires."""
    return "\n".join(
        f"{schema.format_timestamp(0 if i == 0 else c.start)} {c.title}"
        for i, c in enumerate(chapters)
    )


def webvtt(chapters: Sequence[Chapter]) -> str:
    """A WebVTT file of chapter cues, numbered from 1."""
    cues = [
        f"{i}\n{vtt_time(c.start)} --> {vtt_time(c.end)}\n{c.title}"
        for i, c in enumerate(chapters, start=1)
    ]
    return "\n\n".join(["WEBVTT", *cues]) + "\n"


def text_lines(chapters: Sequence[Chapter]) -> str:
    """One line per chapter: its label and title."""
    return "\n".join(f"{c.label} {c.title}" for c in chapters)
