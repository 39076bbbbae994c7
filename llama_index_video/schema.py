"""Node metadata conventions shared by every stage, and the citation label's grammar.

Metadata stays flat (str/int/float/None) because LlamaIndex and Chroma reject
nested values. Times are seconds on the source file's own timeline.

The label (``[talk.mp4 01:34-01:41]``) is written once per moment at ingest
(:func:`moment_label`, stored under :data:`LABEL`) and read back from what a model
wrote (:func:`parse_label`); both sit here, with the timestamp they share, so the two
directions cannot drift apart (``tests/test_schema.py`` checks the round trip).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Final, Literal

Modality = Literal["transcript", "frame", "ocr", "text", "video", "audio", "chapter"]
MODALITIES: Final[tuple[str, ...]] = (
    "transcript",
    "frame",
    "ocr",
    "text",
    "video",
    "audio",
    "chapter",
)
# A chapter spans minutes of a recording: a search returns its moments, and chapters
# only when asked for by modality.
MOMENT_MODALITIES: Final[tuple[str, ...]] = tuple(m for m in MODALITIES if m != "chapter")


def parse_modalities(text: str) -> list[str]:
    """``"transcript, ocr"`` -> ``["transcript", "ocr"]``; ValueError naming the choices."""
    chosen = [m.strip() for m in text.split(",") if m.strip()]
    if not chosen or not set(chosen) <= set(MODALITIES):
        raise ValueError(f"choose from {','.join(MODALITIES)}")
    return chosen


# Metadata keys.
SOURCE: Final = "source"  # path of the media file as ingested
FILE_NAME: Final = "file_name"
CONTENT_HASH: Final = "content_hash"  # sha256 of the file's bytes: identity across moves
MODALITY: Final = "modality"
START_S: Final = "start_s"
END_S: Final = "end_s"
LABEL: Final = "label"  # "[file.mp4 01:34-01:41]"
TIME_LABEL: Final = "time"  # "01:34"
MEDIA_URL: Final = "media_url"  # "file.mp4#t=94.9"
LANGUAGE: Final = "language"
FRAME_TIME: Final = "frame_time"
IMAGE_PATH: Final = "image_path"
FRAME_ID: Final = "frame_id"  # on a transcript unit: the frame on screen ("" if none)
UNIT_ID: Final = "unit_id"  # on a frame or OCR node: the unit spoken then ("" if none)
OCR_IDS: Final = "ocr_ids"  # on a frame: its text's ocr node ids, space-separated ("" if none)
NOTE: Final = "note"
ORIGIN_URL: Final = "origin_url"  # a downloaded file's page or link (redacted)
SITE_URL: Final = "site_url"  # the moment on the site: "https://youtu.be/ID?t=94"
SPEAKER: Final = "speaker"  # on a transcript unit with diarization: "SPEAKER_1", ...
SENTENCES: Final = "sentences"  # on a transcript unit: where its sentences begin, "0:94.9 57:98.2"
CHAPTER: Final = "chapter"  # on a transcript unit: its chapter's node id (none if no chapters)
TITLE: Final = "title"  # on a chapter: its short title; on a unit: its chapter's

# Keys that locate a moment but carry no meaning for an embedding model.
EMBED_EXCLUDED_KEYS: Final[tuple[str, ...]] = (
    SOURCE,
    FILE_NAME,
    CONTENT_HASH,
    MODALITY,
    START_S,
    END_S,
    LABEL,
    TIME_LABEL,
    MEDIA_URL,
    LANGUAGE,
    FRAME_TIME,
    IMAGE_PATH,
    NOTE,
    FRAME_ID,
    UNIT_ID,
    OCR_IDS,
    SPEAKER,
    ORIGIN_URL,
    SITE_URL,
    SENTENCES,
    CHAPTER,
    TITLE,
)
# What the generator should see: the label is enough to cite.
LLM_EXCLUDED_KEYS: Final[tuple[str, ...]] = (
    SOURCE,
    CONTENT_HASH,
    MODALITY,
    START_S,
    END_S,
    TIME_LABEL,
    MEDIA_URL,
    FRAME_TIME,
    IMAGE_PATH,
    FILE_NAME,
    NOTE,
    FRAME_ID,
    UNIT_ID,
    OCR_IDS,
    ORIGIN_URL,
    SITE_URL,
    SENTENCES,
    CHAPTER,
    TITLE,
)


def format_timestamp(seconds: float) -> str:
    """Format seconds as ``mm:ss`` (or ``h:mm:ss`` from one hour on)."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes:02d}:{secs:02d}"


def moment_label(file_name: str, start: float | None, end: float | None) -> str:
    """The citation label ``[file mm:ss-mm:ss]`` (``[file]`` for untimed documents)."""
    if start is None:
        return f"[{file_name}]"
    if end is None or format_timestamp(end) == format_timestamp(start):
        return f"[{file_name} {format_timestamp(start)}]"
    return f"[{file_name} {format_timestamp(start)}-{format_timestamp(end)}]"


def parse_timestamp(text: str) -> float:
    """Seconds of ``ss``, ``mm:ss`` or ``h:mm:ss`` (fractions allowed), with a leading
    ``-`` negating the whole time.

    Raises:
        ValueError: ``text`` is not a timestamp, or not a finite one (``nan``, ``inf``,
            ``1e309``: NaN passes every comparison, so a span check would let it by).
    """
    body = text.strip()
    # The sign belongs to the whole time: "-00:20" is -20 s, not -0 min + 20 s.
    sign = -1.0 if body.startswith("-") else 1.0
    parts = body.removeprefix("-").split(":")
    if not 1 <= len(parts) <= 3 or not all(p.strip()[:1] not in "+-" for p in parts):
        raise ValueError(f"not a timestamp: {text!r}")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    if not math.isfinite(seconds):
        raise ValueError(f"not a timestamp: {text!r}")
    return sign * seconds


def parse_time(value: object, *, negative: bool = False) -> float:
    """Seconds of a time as any front door receives it: a number (94.5), or text in
    seconds or ``mm:ss``/``h:mm:ss`` (``"01:34"``); what the CLI, the service, the agent
    tools and the MCP server all read times with.

    Args:
        value: the time as received.
        negative: let a time before 0 through (``"-00:20"`` is -20.0), for a caller
            that keeps a span inside the recording itself (an agent reading 30 s around
            a hit near the start); refused otherwise.

    Raises:
        ValueError: one line saying ``value`` is not a time and what to give: not a
            number or text (``None``, a list, ``True``), not a timestamp, not finite, or
            negative (unless ``negative``).
    """
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
    seconds = None
    try:
        if isinstance(value, str):
            seconds = parse_timestamp(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value)  # an int past a float's range raises OverflowError
    except (ValueError, OverflowError):
        pass
    if seconds is None or not math.isfinite(seconds):
        raise ValueError(f"{shown} is not a time; give seconds (94.5) or mm:ss (01:34)")
    if seconds < 0 and not negative:
        raise ValueError(f"{shown} is not a time: a time is never negative; give 0 or more")
    return seconds


_TIME = r"\d{1,2}(?::\d{2}){1,2}(?:\.\d+)?"
# One label as written: a file name, then optionally a time or a time range. Read
# loosely, as models copy labels: "file, 01:34", "file at 01:34", "01:34 to 01:41",
# en and em dashes.
_LABEL = re.compile(
    rf"(?P<file>.*?)[\s,@]*(?:\bat\s+)?"
    rf"(?:(?P<start>{_TIME})(?:\s*(?:-|–|—|\bto\b)\s*(?P<end>{_TIME}))?)?\s*",
    re.IGNORECASE,
)


def parse_label(text: str) -> tuple[str, float | None, float | None] | None:
    """``(file, start, end)`` of one label's body, without its brackets (the inverse of
    :func:`moment_label`, read loosely); the file may be empty, the times None.

    ``"talk.mp4 01:34-01:41"`` gives ``("talk.mp4", 94.0, 101.0)``; ``"notes.md"``
    gives ``("notes.md", None, None)``. None when ``text`` does not end like a label.
    """
    match = _LABEL.fullmatch(text.strip())
    if match is None:
        return None
    start = parse_timestamp(match["start"]) if match["start"] else None
    end = parse_timestamp(match["end"]) if match["end"] else None
    return match["file"].strip(" \t,:@"), start, end


def media_fragment_url(source: str, start: float, end: float | None = None) -> str:
    """A playable Media Fragments URI: ``file.mp4#t=94.9`` or ``#t=94.9,101.2``."""
    if end is None:
        return f"{source}#t={start:.1f}"
    return f"{source}#t={start:.1f},{end:.1f}"


def format_sentences(starts: Iterable[tuple[int, float]]) -> str:
    """Where a unit's sentences begin, stored under :data:`SENTENCES`: ``"0:94.9 57:98.2"``,
    each ``character offset in its text:second``."""
    return " ".join(f"{offset}:{round(second, 3)}" for offset, second in starts)


def parse_sentences(text: object) -> list[tuple[int, float]]:
    """The ``(offset, second)`` pairs of :func:`format_sentences`; ``[]`` for anything else
    (a node stored before units recorded their sentences, or a damaged value)."""
    if not isinstance(text, str):
        return []
    pairs = []
    for item in text.split():
        offset, _, second = item.partition(":")
        try:
            pairs.append((int(offset), float(second)))
        except ValueError:
            return []
    return pairs
