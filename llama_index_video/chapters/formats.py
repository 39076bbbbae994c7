"""Chapters written for elsewhere: YouTube's description lines and WebVTT chapters.

YouTube reads ``00:00 Title`` lines from a description, the first at ``00:00``, and
shows them only when there are three or more, each 10 s or longer (its help page, "Add
chapters to your videos"); otherwise the lines stay plain text. WebVTT chapter tracks
(``<track kind="chapters">``) are cues whose text is the title.
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index_video import schema
from llama_index_video.results import Chapter
from llama_index_video.store.transcript_export import vtt_time

FORMATS = ("text", "youtube", "vtt")
YOUTUBE_MIN_CHAPTERS = 3
YOUTUBE_MIN_SECONDS = 10.0


def youtube_lines(chapters: Sequence[Chapter]) -> str:
    """``00:00 Title`` per chapter; the first starts at ``00:00`` as YouTube requires."""
    return "\n".join(
        f"{schema.format_timestamp(0 if i == 0 else c.start)} {c.title}"
        for i, c in enumerate(chapters)
    )


def youtube_shortfall(chapters: Sequence[Chapter]) -> str | None:
    """Why YouTube would show no chapters from :func:`youtube_lines`, or None."""
    if len(chapters) < YOUTUBE_MIN_CHAPTERS:
        return (
            f"YouTube shows chapters only when there are {YOUTUBE_MIN_CHAPTERS} or more, "
            f"and this recording has {len(chapters)}"
        )
    starts = [0.0, *(c.start for c in chapters[1:])]
    ends = [*starts[1:], chapters[-1].end]
    short = sum(end - start < YOUTUBE_MIN_SECONDS for start, end in zip(starts, ends, strict=True))
    if short:
        return (
            f"YouTube shows no chapters when one lasts under {YOUTUBE_MIN_SECONDS:.0f} s, "
            f"and {short} of these do"
        )
    return None


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
