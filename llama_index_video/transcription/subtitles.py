"""Subtitles instead of speech recognition: sidecar files and embedded text streams.

A video that already carries its words does not need Whisper. :func:`find_subtitles`
looks for a sidecar file next to the media (``talk.srt``, ``talk.vtt``, ``talk.en.vtt``,
``talk.en-US.srt``...) and then for a text subtitle stream inside it (``subrip`` in MKV,
``mov_text`` in MP4, ``ass``, ``webvtt``...); :func:`load_subtitles` turns what it found
into the same :class:`Transcription` a speech backend returns.

Parsing is left to maintained libraries: ``srt`` for SubRip, ``webvtt-py`` for WebVTT,
and FFmpeg (through PyAV) for embedded streams, which it decodes to ASS events whatever
the container's format. What remains here is clean-up: markup (``<i>``, ``<c>``,
``<00:00:01.000>``, ``{\\an8}``) is stripped, and the rolling captions of auto-generated
(YouTube-style) WebVTT, where every line is shown two or three times as it scrolls up,
are merged into segments that each hold a line once, with the time it was first shown.
Bitmap subtitle streams (DVD, PGS, DVB) carry pictures, not text, and are skipped.
"""

from __future__ import annotations

import codecs
import html
import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple

import av
import srt
import webvtt
from av.container import InputContainer
from av.subtitles.stream import SubtitleStream
from av.subtitles.subtitle import AssSubtitle, Subtitle
from webvtt.errors import MalformedCaptionError, MalformedFileError

from llama_index_video.errors import MediaDecodeError, MediaError, UnsupportedMediaError
from llama_index_video.media.probe import container_start
from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo

logger = logging.getLogger(__name__)

SIDECAR_SUFFIXES: Final = (".srt", ".vtt")
ROLLING_GAP_S: Final = 0.5
"""Cues further apart than this are never merged as one rolling caption."""

_LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_MARKUP = re.compile(r"</?[A-Za-z][^<>]*>|<\d+(?::\d{2}){1,2}[.,]\d{3}>")
_ASS_OVERRIDE = re.compile(r"\{\\[^{}]*\}")
_ASS_BLOCK = re.compile(r"\{[^{}]*\}")
_ASS_BREAK = re.compile(r"\\[Nn]")
_ASS_EVENT_FIELDS: Final = 9  # ReadOrder, Layer, Style, Name, MarginL/R/V, Effect, Text

# ISO 639-2 codes used by containers (MKV, MP4), mapped to the ISO 639-1 codes Whisper
# and sidecar file names use, for the most common subtitle languages.
_ISO639_2_TO_1: Final = {
    "ara": "ar", "chi": "zh", "zho": "zh", "cze": "cs", "ces": "cs", "dan": "da",
    "dut": "nl", "nld": "nl", "eng": "en", "fin": "fi", "fre": "fr", "fra": "fr",
    "ger": "de", "deu": "de", "gre": "el", "ell": "el", "heb": "he", "hin": "hi",
    "hun": "hu", "ind": "id", "ita": "it", "jpn": "ja", "kor": "ko", "nor": "no",
    "per": "fa", "fas": "fa", "pol": "pl", "por": "pt", "rum": "ro", "ron": "ro",
    "rus": "ru", "spa": "es", "swe": "sv", "tha": "th", "tur": "tr", "ukr": "uk",
    "vie": "vi",
}  # fmt: skip


@dataclass(frozen=True)
class SubtitleSource:
    """Where a media file's subtitles are: a sidecar file or a stream inside the file."""

    path: Path
    """The sidecar ``.srt``/``.vtt`` file, or the media file holding the stream."""
    format: str
    """``"srt"`` or ``"vtt"`` for a sidecar; the stream's codec name otherwise."""
    stream_index: int | None = None
    """Index of the subtitle stream in ``path``; ``None`` for a sidecar file."""
    language: str | None = None
    """ISO 639-1 code when known (``"en"``), else the lower-cased primary tag as found."""

    @property
    def embedded(self) -> bool:
        """Whether the subtitles are a stream inside the media file."""
        return self.stream_index is not None

    @property
    def shown(self) -> str:
        """How to name these subtitles to the user: the sidecar file's name, or
        ``embedded subtitle stream N``."""
        if self.embedded:
            return f"embedded subtitle stream {self.stream_index}"
        return self.path.name


class Cue(NamedTuple):
    """One subtitle cue: its display time and its clean, non-empty lines."""

    start: float
    end: float
    lines: tuple[str, ...]


def find_subtitles(
    media_path: str | Path,
    *,
    languages: Sequence[str] | None = None,
    sidecar: bool = True,
    embedded: bool = True,
) -> SubtitleSource | None:
    """Find subtitles for ``media_path``: a sidecar file first, then an embedded text stream.

    A sidecar is ``<stem>.srt``/``<stem>.vtt`` or ``<stem>.<language>.srt``/``.vtt`` in the
    same folder. Without ``languages`` the untagged file wins, then tags in alphabetical
    order. With ``languages`` only those languages (in that order) and untagged files or
    streams qualify. Among streams, forced ones (partial translations) come last and the
    container's default stream first.

    Args:
        media_path: The video or audio file.
        languages: Preferred language codes such as ``["en", "de"]`` (ISO 639-1 or 639-2).
        sidecar: Look for sidecar files.
        embedded: Look for subtitle streams inside the file (opens it with PyAV).

    Returns:
        The best source, or ``None`` when there is none.

    Raises:
        MediaError: ``media_path`` does not exist, or cannot be opened to look for streams.
    """
    path = Path(media_path)
    if not path.is_file():
        raise MediaError(path, "file not found; check the path")
    wanted = [_normalise_language(code) for code in languages] if languages is not None else None
    if sidecar:
        found = _find_sidecar(path, wanted)
        if found is not None:
            return found
    return _find_stream(path, wanted) if embedded else None


def load_subtitles(
    source: SubtitleSource | str | Path, *, merge_rolling: bool = True
) -> Transcription:
    """Read subtitles as a :class:`Transcription` of timed segments.

    Args:
        source: What :func:`find_subtitles` returned, or the path of a ``.srt``/``.vtt`` file.
        merge_rolling: Merge lines repeated by consecutive cues (auto-generated rolling
            captions) into one segment per line; cues without repeats are unaffected.

    Returns:
        Segments in time order (one per cue, or per new line when merging), with the
        ``backend`` ``"subtitles"`` and the source's language. A sidecar is parsed at once,
        so a malformed file fails here; an embedded stream is demuxed lazily.

    Raises:
        MediaError: The file is missing, is not a subtitle file, or is malformed (the
            message names the file); :class:`MediaDecodeError` for an unreadable stream.
    """
    if not isinstance(source, SubtitleSource):
        source = _sidecar_source(Path(source))
    cues: Iterable[Cue]
    if source.embedded:
        _check_stream(source)
        cues = _stream_cues(source)
    else:
        cues = _read_sidecar(source)
    label = source.path.name
    if source.stream_index is not None:
        label = f"{label} (stream {source.stream_index})"
    return Transcription(
        info=TranscriptionInfo(
            backend="subtitles",
            model=label,
            language=source.language,
            options={
                "path": str(source.path),
                "format": source.format,
                "stream_index": source.stream_index,
                "merge_rolling": merge_rolling,
            },
        ),
        segments=merge_rolling_cues(cues) if merge_rolling else _one_segment_per_cue(cues),
    )


def usable_subtitles(media_path: str | Path) -> tuple[Transcription | None, str | None]:
    """The subtitles to use instead of speech recognition for ``media_path``, if any.

    Returns:
        The subtitles' transcription (None: there are none, or they are unusable) and a
        one-line note for the user: where the transcript came from, or why the sidecar
        file found was not used (speech recognition is used instead).
    """
    source = find_subtitles(media_path)
    if source is None:
        return None, None
    try:
        transcription = load_subtitles(source)
    except MediaError as exc:
        if source.embedded:
            raise
        logger.info("%s", exc)
        return None, f"{exc.reason.split(';')[0]}: {source.path.name}; transcribed the audio"
    return transcription, f"transcript from subtitles ({source.shown})"


def merge_rolling_cues(cues: Iterable[Cue]) -> Iterator[Segment]:
    """Merge rolling captions into segments that hold each line once.

    Within contiguous cues (at most :data:`ROLLING_GAP_S` apart), lines the previous cue
    ended with and this cue starts with are repeats: they extend the segment they belong
    to instead of starting a new one. A line that grows word by word (``"hello"`` then
    ``"hello everyone"``) replaces its shorter self. A cue with nothing new extends the
    current segment's end. Ordinary subtitles, whose cues never repeat, come out one
    segment per cue.

    Args:
        cues: Cues in time order.

    Yields:
        Segments in time order.
    """
    pending: _Pending | None = None
    previous: tuple[str, ...] = ()
    previous_end = -math.inf
    for cue in cues:
        if not cue.lines:
            continue
        contiguous = cue.start - previous_end <= ROLLING_GAP_S
        repeated = _overlap(previous, cue.lines) if contiguous else 0
        new = list(cue.lines[repeated:])
        if (
            pending is not None
            and contiguous
            and repeated == 0
            and previous
            and pending.lines[-1] == previous[-1]
            and new[0].startswith(previous[-1] + " ")
        ):
            pending.lines[-1] = new.pop(0)
            pending.end = max(pending.end, cue.end)
        if new:
            if pending is not None:
                yield pending.segment()
            pending = _Pending(start=cue.start, end=cue.end, lines=new)
        elif pending is not None:
            pending.end = max(pending.end, cue.end)
        previous, previous_end = cue.lines, cue.end
    if pending is not None:
        yield pending.segment()


@dataclass
class _Pending:
    """The segment being built by :func:`merge_rolling_cues` (mutable while it grows)."""

    start: float
    end: float
    lines: list[str]

    def segment(self) -> Segment:
        return Segment(start=self.start, end=max(self.end, self.start), text=" ".join(self.lines))


def _one_segment_per_cue(cues: Iterable[Cue]) -> Iterator[Segment]:
    for cue in cues:
        if cue.lines:
            yield Segment(start=cue.start, end=cue.end, text=" ".join(cue.lines))


def _overlap(previous: tuple[str, ...], current: tuple[str, ...]) -> int:
    """The largest ``k`` such that ``previous`` ends with the first ``k`` lines of ``current``."""
    for k in range(min(len(previous), len(current)), 0, -1):
        if previous[-k:] == current[:k]:
            return k
    return 0


def clean_lines(text: str, *, ass_event: bool = False) -> tuple[str, ...]:
    """Strip subtitle markup from ``text`` and return its non-empty lines.

    Removes HTML-like tags (``<i>``, ``<font ...>``, ``<c.colorE5E5E5>``), WebVTT inline
    timestamps (``<00:00:01.000>``), ASS override codes (``{\\an8}``, ``{\\i1}``), turns
    ASS line breaks (``\\N``) into lines and ``\\h`` into spaces, unescapes HTML entities
    and collapses whitespace.

    Args:
        text: Cue text.
        ass_event: ``text`` is an ASS event's text, where every ``{...}`` block is an
            override or a comment (in other formats only ``{\\...}`` blocks are removed).

    Returns:
        The cleaned lines, without empty ones.
    """
    text = (_ASS_BLOCK if ass_event else _ASS_OVERRIDE).sub("", text)
    text = _ASS_BREAK.sub("\n", text).replace("\\h", " ")
    text = html.unescape(_MARKUP.sub("", text))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return tuple(line for line in lines if line)


def _sidecar_source(path: Path) -> SubtitleSource:
    suffix = path.suffix.lower()
    if suffix not in SIDECAR_SUFFIXES:
        raise UnsupportedMediaError(
            path, f"not a subtitle file; expected one of {', '.join(SIDECAR_SUFFIXES)}"
        )
    if not path.is_file():
        raise MediaError(path, "subtitle file not found; check the path")
    tag = Path(path.stem).suffix.lstrip(".")
    language = _normalise_language(tag) if _LANGUAGE_TAG.match(tag) else None
    return SubtitleSource(path=path, format=suffix.lstrip("."), language=language)


def sidecar_tag(candidate: Path, media: Path) -> str | None:
    """The language tag of ``candidate`` as a sidecar of ``media`` ("" untagged), None
    when its name is not one: ``talk.srt``, ``talk.en.vtt`` and ``talk.mp4.srt`` (as some
    players write it) are sidecars of ``talk.mp4`` in the same folder."""
    suffix = candidate.suffix.lower()
    if suffix not in SIDECAR_SUFFIXES or candidate.parent != media.parent:
        return None
    prefix = next((p for p in (media.name, media.stem) if candidate.name.startswith(p + ".")), None)
    if prefix is None:
        return None
    tag = candidate.name[len(prefix) + 1 : -len(suffix)]
    return tag if not tag or _LANGUAGE_TAG.match(tag) else None


def _find_sidecar(media: Path, languages: Sequence[str] | None) -> SubtitleSource | None:
    ranked: list[tuple[tuple[int, bool, str, int], SubtitleSource]] = []
    for candidate in media.parent.iterdir():
        suffix = candidate.suffix.lower()
        tag = sidecar_tag(candidate, media)
        if tag is None or not candidate.is_file():
            continue
        language = _normalise_language(tag) if tag else None
        rank = _language_rank(language, languages)
        if rank is None:
            continue
        source = SubtitleSource(path=candidate, format=suffix.lstrip("."), language=language)
        ranked.append(((rank, bool(tag), tag, SIDECAR_SUFFIXES.index(suffix)), source))
    return min(ranked, key=lambda item: item[0])[1] if ranked else None


def _find_stream(media: Path, languages: Sequence[str] | None) -> SubtitleSource | None:
    ranked: list[tuple[tuple[bool, int, bool, int], SubtitleSource]] = []
    with _open(media) as container:
        for stream in container.streams.subtitles:
            codec = stream.codec_context.codec
            if not codec.text_sub:
                logger.debug(
                    "Skipping bitmap subtitle stream %d (%s) in %s", stream.index, codec.name, media
                )
                continue
            tag = stream.metadata.get("language", "")
            language = _normalise_language(tag) if tag and tag != "und" else None
            rank = _language_rank(language, languages)
            if rank is None:
                continue
            forced = bool(stream.disposition & av.stream.Disposition.forced)
            default = bool(stream.disposition & av.stream.Disposition.default)
            source = SubtitleSource(
                path=media, format=codec.name, stream_index=stream.index, language=language
            )
            ranked.append(((forced, rank, not default, stream.index), source))
    return min(ranked, key=lambda item: item[0])[1] if ranked else None


def _language_rank(language: str | None, languages: Sequence[str] | None) -> int | None:
    """Order by preference: listed languages in order, then unknown ones; others excluded."""
    if languages is None:
        return 0
    if language is None:
        return len(languages)
    return languages.index(language) if language in languages else None


def _read_sidecar(source: SubtitleSource) -> list[Cue]:
    text = _read_text(source.path)
    try:
        cues = _parse_srt(text) if source.format == "srt" else _parse_vtt(text)
    except (srt.SRTParseError, MalformedCaptionError, MalformedFileError, ValueError) as exc:
        # The parsers quote the offending text, which may be binary garbage: not shown.
        raise MediaError(
            source.path,
            f"not a valid {source.format.upper()} subtitle file; fix or delete it, "
            f"or turn subtitles off to transcribe the audio instead",
        ) from exc
    backwards = [cue for cue in cues if cue.end < cue.start]
    if backwards:
        logger.warning(
            "%s: skipping %d cue(s) that end before they start", source.path, len(backwards)
        )
    return sorted((cue for cue in cues if cue.end >= cue.start), key=lambda cue: cue.start)


def _parse_srt(text: str) -> list[Cue]:
    return [
        Cue(sub.start.total_seconds(), sub.end.total_seconds(), clean_lines(sub.content))
        for sub in srt.parse(text)
    ]


def _parse_vtt(text: str) -> list[Cue]:
    return [
        Cue(
            caption.start_time.in_milliseconds() / 1000,
            caption.end_time.in_milliseconds() / 1000,
            clean_lines(caption.text),
        )
        for caption in webvtt.from_string(text, strict=True).captions
    ]


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MediaError(path, f"cannot read the subtitle file ({exc.strerror or exc})") from exc
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        logger.warning("%s is not UTF-8; reading it as Windows-1252", path)
        return data.decode("cp1252", errors="replace")


def _check_stream(source: SubtitleSource) -> None:
    with _open(source.path) as container:
        _subtitle_stream(container, source)


def _subtitle_stream(container: InputContainer, source: SubtitleSource) -> SubtitleStream:
    streams = container.streams
    index = source.stream_index
    stream = streams[index] if index is not None and 0 <= index < len(streams) else None
    if not isinstance(stream, SubtitleStream) or not stream.codec_context.codec.text_sub:
        raise UnsupportedMediaError(
            source.path,
            f"stream {index} is not a text subtitle stream; call find_subtitles() to pick one",
        )
    return stream


def _stream_cues(source: SubtitleSource) -> Iterator[Cue]:
    """Demux and decode one subtitle stream; FFmpeg hands every text format over as ASS."""
    with _open(source.path) as container:
        stream = _subtitle_stream(container, source)
        offset = container_start(container)
        try:
            for packet in container.demux(stream):
                if packet.pts is None or packet.size == 0 or packet.time_base is None:
                    continue
                subtitles = stream.decode2(packet)
                if subtitles is None:
                    continue
                at = float(packet.pts * packet.time_base) - offset
                start = at + subtitles.start_display_time / 1000
                if subtitles.end_display_time > subtitles.start_display_time:
                    end = at + subtitles.end_display_time / 1000
                else:
                    end = at + float((packet.duration or 0) * packet.time_base)
                lines = [line for rect in subtitles for line in _rect_lines(rect)]
                if lines:
                    yield Cue(start, max(end, start), tuple(lines))
        except av.error.FFmpegError as exc:
            raise MediaDecodeError(
                source.path,
                f"cannot decode subtitle stream {source.stream_index} ({exc}); the file may "
                f"be damaged, turn subtitles off to transcribe the audio instead",
            ) from exc


def _rect_lines(rect: Subtitle) -> tuple[str, ...]:
    if not isinstance(rect, AssSubtitle):
        return ()
    if rect.type == b"text":
        return clean_lines(rect.text.decode("utf-8", errors="replace"))
    event = rect.ass.decode("utf-8", errors="replace")
    fields = event.split(",", _ASS_EVENT_FIELDS - 1)
    text = fields[-1] if len(fields) == _ASS_EVENT_FIELDS else event
    return clean_lines(text, ass_event=True)


def _open(path: Path) -> InputContainer:
    try:
        return av.open(str(path), mode="r")
    except av.error.FFmpegError as exc:
        raise UnsupportedMediaError(
            path, f"cannot be opened as media to look for subtitles ({exc})"
        ) from exc


def _normalise_language(code: str) -> str:
    primary = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    return _ISO639_2_TO_1.get(primary, primary)
