"""A recording's transcript out of the index: SubRip, WebVTT, plain text or JSON.

Every format carries the stored units as they are: one cue or line per transcript unit,
its start and end on the recording's timeline (to the millisecond, so a standard parser
reads back the stored times), its speaker and the language it was heard in where the
index has them. Nothing is re-timed or merged here: what search cites is what is
exported.

The recording's chapters (:mod:`llama_index_video.chapters`), where it has them, go
where a format has room for them, and never between a cue's lines:

- ``srt``: SubRip through the ``srt`` library; a speaker leads its cue (``SPEAKER_1:``).
  SubRip has no place for chapters: none.
- ``vtt``: WebVTT; a ``NOTE`` names the recording, a speaker is a voice span
  (``<v SPEAKER_1>``), a unit heard in another language than the recording's first is
  wrapped in a language span (``<lang de>``); ``&``, ``<`` and ``>`` are escaped. Each
  chapter is a ``NOTE chapter mm:ss-mm:ss: title`` before its first cue (players
  ignore notes; a chapter track is ``llama-index-video chapters --format vtt``).
- ``txt``: one ``[mm:ss-mm:ss] SPEAKER_1: text`` line per unit, for reading; each
  chapter a ``## mm:ss title`` heading before its units.
- ``json``: the source, its languages, its chapters (``start``, ``end``, ``title``) and
  every unit with ``start``, ``end``, ``text``, ``speaker`` and ``language``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal, get_args

from llama_index_video import schema

if TYPE_CHECKING:
    from llama_index_video.results import Chapter
    from llama_index_video.store.library import TranscriptLine

TranscriptFormat = Literal["srt", "vtt", "txt", "json"]
TRANSCRIPT_FORMATS: Final[tuple[str, ...]] = get_args(TranscriptFormat)
MEDIA_TYPES: Final[dict[str, str]] = {
    "srt": "application/x-subrip",
    "vtt": "text/vtt",
    "txt": "text/plain",
    "json": "application/json",
}


def render_transcript(
    lines: Sequence[TranscriptLine],
    *,
    fmt: str,
    source: str,
    chapters: Sequence[Chapter] = (),
) -> str:
    """``lines`` of the recording ``source`` written in ``fmt`` (one of
    :data:`TRANSCRIPT_FORMATS`), with its ``chapters`` where the format has room.

    Raises:
        ValueError: ``fmt`` is not a transcript format.
    """
    if fmt == "srt":
        return _srt(lines)
    if fmt == "vtt":
        return _vtt(lines, source, chapters)
    if fmt == "txt":
        return "".join(
            f"{_heading(chapter, 'txt')}{_said(line, line.text)}\n"
            for line, chapter in _with_chapters(lines, chapters)
        ).lstrip("\n")
    if fmt == "json":
        units = [
            {
                "start": round(line.start, 3),
                "end": round(line.end, 3),
                "text": line.text,
                "speaker": line.speaker,
                "language": line.language,
            }
            for line in lines
        ]
        sections = [
            {"start": round(c.start, 3), "end": round(c.end, 3), "title": c.title} for c in chapters
        ]
        payload = {
            "source": source,
            "languages": languages(lines),
            "chapters": sections,
            "units": units,
        }
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"{fmt!r}: choose a transcript format from {', '.join(TRANSCRIPT_FORMATS)}")


def languages(lines: Sequence[TranscriptLine]) -> list[str]:
    """The languages the units were heard in, in order of first appearance."""
    return list(dict.fromkeys(line.language for line in lines if line.language))


def _one_line(text: str) -> str:
    """The unit's text on one line: a blank line would end a cue early."""
    return " ".join(text.split())


def _said(line: TranscriptLine, text: str) -> str:
    label = f"[{schema.format_timestamp(line.start)}-{schema.format_timestamp(line.end)}]"
    speaker = f" {line.speaker}:" if line.speaker else ""
    return f"{label}{speaker} {_one_line(text)}"


def _srt(lines: Sequence[TranscriptLine]) -> str:
    from llama_index_video.media.export_subtitles import Cue, srt_text

    return srt_text(
        Cue(
            line.start,
            line.end,
            f"{line.speaker}: {_one_line(line.text)}" if line.speaker else _one_line(line.text),
        )
        for line in lines
    )


def _with_chapters(
    lines: Sequence[TranscriptLine], chapters: Sequence[Chapter]
) -> list[tuple[TranscriptLine, Chapter | None]]:
    """Each line with the chapter it opens (its first line, or the first after a chapter
    began before the span); None for the others."""
    pending = sorted(chapters, key=lambda c: c.start)
    paired: list[tuple[TranscriptLine, Chapter | None]] = []
    for line in lines:
        opened = None
        while pending and pending[0].start <= line.start + 1e-6:
            opened = pending.pop(0)
        paired.append((line, opened))
    return paired


def _heading(chapter: Chapter | None, fmt: str) -> str:
    if chapter is None:
        return ""
    if fmt == "txt":
        return f"\n## {schema.format_timestamp(chapter.start)} {_one_line(chapter.title)}\n\n"
    span = f"{schema.format_timestamp(chapter.start)}-{schema.format_timestamp(chapter.end)}"
    return f"NOTE chapter {span}: {_escaped(_one_line(chapter.title))}"


def _vtt(lines: Sequence[TranscriptLine], source: str, chapters: Sequence[Chapter]) -> str:
    heard = languages(lines)
    note = f"NOTE {_escaped(source)}" + (f", heard in {'+'.join(heard)}" if heard else "")
    blocks = ["WEBVTT", note]
    for line, chapter in _with_chapters(lines, chapters):
        if chapter is not None:
            blocks.append(_heading(chapter, "vtt"))
        text = _escaped(_one_line(line.text))
        if line.language and heard and line.language != heard[0]:
            text = f"<lang {line.language}>{text}</lang>"
        if line.speaker:
            text = f"<v {_escaped(line.speaker)}>{text}"
        blocks.append(f"{vtt_time(line.start)} --> {vtt_time(line.end)}\n{text}")
    return "\n\n".join(blocks) + "\n"


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def vtt_time(seconds: float) -> str:
    """A WebVTT cue time, ``hh:mm:ss.mmm``."""
    millis = round(max(0.0, seconds) * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"
