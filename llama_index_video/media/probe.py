"""Probing a media file: duration, streams, codecs, frame rate.

PyAV ships FFmpeg's libraries inside its wheel, so probing needs no ``ffprobe``
on PATH. A file is usable when it has at least one decodable audio or video
stream; cover art in audio files (an ``attached_pic`` video stream) does not count
as video.

The duration a container declares is a claim: a Matroska header may say 1e9 s, a
file written with a timestamp offset may count the offset, a truncated download
keeps the full length, a VBR MP3 without a header is estimated from its first frames.
So the probe also looks where the last packet ends (one seek near the declared end,
then demuxing what follows, a bounded number of packets) and, when the declaration
is clearly off (by more than 1 s and 5 %), reports the measured end instead. Every
later stage (audio decoding, clip windows, the last frame's span, labels) ends here.

A packet's own duration is a claim too: an MP4 whose last sample lasts 2^31 ticks
(its ``stts`` table says so) would end days after its last frame. So each stream's
last packet is measured as lasting no longer than the longest of its other packets
seen there: the end is where the stream's real last packet starts plus a normal
packet's length. A declared duration past that is still believed when the last
packet's own duration reaches it and adds at most :data:`LONGEST_PACKET_S` (a slide
shown for the last 30 s of a screen recording), never when it adds hours.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av

from llama_index_video.errors import MediaDecodeError, MediaError, UnsupportedMediaError

logger = logging.getLogger(__name__)

DECODE_TRIES = 50
"""Packets a file without a length is tried on before it counts as no media."""
ATTACHED_PIC = 0x0400
"""``AV_DISPOSITION_ATTACHED_PIC``: a video stream that is cover art, not video."""
MAX_CORRUPT_PACKETS = 50
_BIT_RATE_ESTIMATES = frozenset({"aac", "amr", "mpeg", "mpegts"})
"""Formats whose duration FFmpeg estimates from their size and bit rate (PyAV's names)."""
_ID3_HEADER = 10  # bytes; its size field counts the tag after them, 7 bits a byte
_MP3_FIRST_FRAME_BYTES = 1024  # looked through for a header that counts the frames
_TEXT_BYTES_READ = 4096  # bytes of a file FFmpeg cannot read looked at for plain text
_MP4_BOXES_READ = 1_000  # top-level boxes of an MP4 looked through for its index
MP4_BOX_HEADER = 8
"""Bytes of an MP4 (QuickTime) box's header: its size (big-endian) and its type."""
_END_SEARCH_PACKETS = 50_000  # packets demuxed after seeking near the end, at most
# A declared duration this far from the last packet's end is not believed; within
# it, the declaration wins (it knows about encoder padding and gapless trims).
_DECLARED_SLACK_S = 1.0
_DECLARED_SLACK_RATIO = 0.05
LONGEST_PACKET_S = 60.0
"""The most a last packet's own duration may add to its stream's end (module docstring)."""


@dataclass(frozen=True)
class AudioTrack:
    """One audio stream of a file, numbered from 1 in the order players list them."""

    number: int
    channels: int
    language: str | None = None
    title: str | None = None

    def __str__(self) -> str:
        """``track 2 (spa, Commentary, stereo)``: how a note names it."""
        layout = {1: "mono", 2: "stereo"}.get(self.channels, f"{self.channels} channels")
        about = [part for part in (self.language, self.title) if part] + [layout]
        return f"track {self.number} ({', '.join(about)})"


@dataclass(frozen=True)
class MediaInfo:
    """What is inside a media file. Times in seconds. ``audio_codec``, ``sample_rate``
    and ``channels`` are the first audio track's; ``audio_tracks`` lists them all."""

    path: Path
    duration: float
    container: str
    has_video: bool
    has_audio: bool
    video_codec: str | None = None
    width: int | None = None
    height: int | None = None
    frame_rate: float | None = None
    audio_codec: str | None = None
    sample_rate: int | None = None
    channels: int | None = None
    subtitle_streams: int = 0
    start_time: float = 0.0
    audio_tracks: tuple[AudioTrack, ...] = ()
    declared_duration: float | None = None
    """The duration the header declares when the packets clearly end before it (a file
    cut short: an unfinished copy, download or recording); None when they agree."""


def open_container(path: Path) -> av.container.InputContainer:
    """Open ``path`` for reading, translating PyAV failures into :class:`MediaError`."""
    if not path.exists():
        raise MediaError(path, "file not found")
    if path.is_dir():
        raise MediaError(path, "is a folder, not a media file")
    if path.stat().st_size == 0:
        raise UnsupportedMediaError(path, "empty file (0 bytes)")
    try:
        return av.open(str(path), mode="r", metadata_errors="ignore")
    except av.error.FFmpegError as exc:
        if _mp4_without_index(path):
            raise UnsupportedMediaError(
                path,
                "an MP4 without its index (no 'moov' box): the recording was cut off "
                "before it was finished, or the download is incomplete",
            ) from exc
        raise UnsupportedMediaError(path, _not_media(path, ffmpeg_reason(exc))) from exc


def _not_media(path: Path, reason: str) -> str:
    """Why there is no media in ``path``: plain text (notes saved under a media suffix)
    said as such, rather than FFmpeg's "invalid data found"; else ``reason``."""
    if _holds_text(path):
        return "not a readable audio or video file: it holds text, not sound or pictures"
    return f"not a readable audio or video file ({reason})"


def _holds_text(path: Path) -> bool:
    """Whether the start of ``path`` is printable UTF-8 text."""
    with path.open("rb") as file:
        head = file.read(_TEXT_BYTES_READ)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut by the end of the bytes read is fine
        if exc.start < len(head) - 3:
            return False
        text = head[: exc.start].decode("utf-8")
    return bool(text) and all(char.isprintable() or char in "\t\n\r\f" for char in text)


def _mp4_without_index(path: Path) -> bool:
    """Whether ``path`` is an MP4 (QuickTime) whose top-level boxes, read from its
    ``ftyp`` to the end of the file, hold no ``moov``: the sample table a recorder
    writes last, so a recording stopped by a crash or a full disk lacks it."""
    with path.open("rb") as file:
        size = path.stat().st_size
        at = 0
        for _ in range(_MP4_BOXES_READ):
            header = file.read(MP4_BOX_HEADER)
            if len(header) < MP4_BOX_HEADER:
                return at > 0
            length, kind = mp4_box(header)
            if at == 0 and kind != b"ftyp":
                return False
            if kind == b"moov":
                return False
            if length == 1:
                length = int.from_bytes(file.read(8), "big")
            if length == 0 or at + length >= size:
                return True
            if length < 8:
                return False
            at += length
            file.seek(at)
    return False


def mp4_box(header: bytes) -> tuple[int, bytes]:
    """The size and the type of the MP4 box whose header (:data:`MP4_BOX_HEADER` bytes)
    is ``header``."""
    return int.from_bytes(header[:4], "big"), header[4:MP4_BOX_HEADER]


def container_start(container: av.container.InputContainer) -> float:
    """Where the container's timeline starts, in seconds: a packet's time minus this is
    its time in the file. ``MediaInfo.start_time`` is the same number, never below 0;
    code holding an open container reads it here rather than probing again."""
    return float(container.start_time) / av.time_base if container.start_time else 0.0


def video_streams(container: av.container.InputContainer) -> list[av.video.stream.VideoStream]:
    """The container's video streams that are video, not cover art (:data:`ATTACHED_PIC`)."""
    return [s for s in container.streams.video if not s.disposition & ATTACHED_PIC]


def decoded_frames(
    container: av.container.InputContainer, stream: av.stream.Stream, path: Path, kind: str
) -> Iterator[Any]:
    """Decoded frames of ``stream`` (audio or video), skipping some corrupt packets.

    Up to ``MAX_CORRUPT_PACKETS`` undecodable packets are skipped (one warning at the
    end); past that, decoding stops with a warning, or fails if nothing was decoded.

    Raises:
        MediaDecodeError: nothing could be decoded.
    """
    packets = container.demux(stream)
    corrupt = decoded = 0
    while True:
        try:
            frames = next(packets).decode()
        except (StopIteration, av.error.EOFError):
            break
        except av.error.FFmpegError as exc:
            corrupt += 1
            if corrupt <= MAX_CORRUPT_PACKETS:
                continue
            if decoded == 0:
                raise MediaDecodeError(path, f"{kind} cannot be decoded ({exc})") from exc
            logger.warning(
                "%s: %s decoding stopped early after repeated errors (%s)", path, kind, exc
            )
            break
        for frame in frames:
            decoded += 1
            yield frame
    if corrupt:
        logger.warning("%s: skipped %d corrupt %s packets", path, corrupt, kind)


def sound_only(path: str | Path) -> bool:
    """Whether ``path`` holds sound and no video (cover art aside), whatever its suffix
    says: meeting recorders write audio-only WebM, Matroska and MP4. False for a file that
    cannot be read, which is then taken for what its suffix says."""
    try:
        info = probe(path)
    except MediaError:
        return False
    return info.has_audio and not info.has_video


def probe(path: str | Path) -> MediaInfo:
    """Describe the streams of a media file.

    Raises:
        UnsupportedMediaError: the file is empty, not media, or has no audio or
            video stream.
    """
    path = Path(path)
    with open_container(path) as container:
        video = next(iter(video_streams(container)), None)
        audio = container.streams.audio[0] if container.streams.audio else None
        if video is None and audio is None:
            raise UnsupportedMediaError(path, "no audio or video stream")
        start = container_start(container)
        declared = _declared_duration(container, video, audio)
        duration = _duration(container, video, audio, origin=start, declared=declared)
        info = MediaInfo(
            path=path,
            duration=duration,
            container=container.format.name,
            has_video=video is not None,
            has_audio=audio is not None,
            video_codec=video.codec_context.name if video is not None else None,
            width=video.codec_context.width if video is not None else None,
            height=video.codec_context.height if video is not None else None,
            frame_rate=_frame_rate(video),
            audio_codec=audio.codec_context.name if audio is not None else None,
            sample_rate=audio.codec_context.sample_rate if audio is not None else None,
            channels=audio.codec_context.channels if audio is not None else None,
            subtitle_streams=len(container.streams.subtitles),
            start_time=max(0.0, start),
            audio_tracks=tuple(
                AudioTrack(
                    number=number,
                    channels=stream.codec_context.channels,
                    language=_tag(stream, "language"),
                    title=_tag(stream, "title"),
                )
                for number, stream in enumerate(container.streams.audio, 1)
            ),
            declared_duration=(
                declared if declared > duration and _declares_its_length(container) else None
            ),
        )
    if info.duration <= 0:
        raise UnsupportedMediaError(path, _why_no_duration(path))
    logger.debug("probed %s: %s", path, info)
    return info


def _declares_its_length(container: av.container.InputContainer) -> bool:
    """Whether the file's header says how long it is, rather than FFmpeg estimating it from
    the file's size and a bit rate (ADTS AAC, AMR, MPEG streams; an MP3 without a Xing,
    Info or VBRI frame, as a recorder writing to a pipe leaves it): at a variable bit rate
    an estimate is off without the file being cut short."""
    name = container.format.name
    if name != "mp3":
        return name not in _BIT_RATE_ESTIMATES
    with open(container.name, "rb") as file:
        id3 = file.read(_ID3_HEADER)
        if id3[:3] == b"ID3" and len(id3) == _ID3_HEADER:
            footer = _ID3_HEADER if id3[5] & 0x10 else 0
            tag = sum(
                (byte & 0x7F) << shift for byte, shift in zip(id3[6:], (21, 14, 7, 0), strict=True)
            )
            file.seek(_ID3_HEADER + tag + footer)
        else:
            file.seek(0)
        first_frame = file.read(_MP3_FIRST_FRAME_BYTES)
    return any(header in first_frame for header in (b"Xing", b"Info", b"VBRI"))


def _why_no_duration(path: Path) -> str:
    """Why a file has no length: unfinished when one of its first packets decodes (a
    Matroska recording still being written), else no media at all (random bytes that
    FFmpeg took for an MP3: "truncated" would send its owner looking for the rest)."""
    with open_container(path) as container:
        streams = [*video_streams(container)[:1], *container.streams.audio[:1]]
        for packet in itertools.islice(container.demux(*streams), DECODE_TRIES):
            try:
                if packet.decode():
                    return "has no duration (truncated or still being written?)"
            except av.error.FFmpegError:
                continue
    return _not_media(path, f"none of its first {DECODE_TRIES} packets decodes")


def _duration(
    container: av.container.InputContainer,
    video: av.video.stream.VideoStream | None,
    audio: av.audio.stream.AudioStream | None,
    *,
    origin: float,
    declared: float,
) -> float:
    """The declared duration, unless the packets clearly end elsewhere."""
    streams: list[av.stream.Stream] = [s for s in (video, audio) if s is not None]
    ends = _packets_end(container, streams, origin=origin, declared=declared)
    if ends is None or ends[0] <= 0:
        return declared
    measured, claimed = ends
    near = abs(declared - measured) <= max(_DECLARED_SLACK_S, _DECLARED_SLACK_RATIO * measured)
    held = measured <= declared <= claimed + _DECLARED_SLACK_S
    if not near and not (held and claimed - measured <= LONGEST_PACKET_S):
        logger.info(
            "%s declares %.3f s but its packets end at %.3f s; using the latter",
            container.name,
            declared,
            measured,
        )
        return measured
    return declared


def _declared_duration(
    container: av.container.InputContainer,
    video: av.video.stream.VideoStream | None,
    audio: av.audio.stream.AudioStream | None,
) -> float:
    if container.duration:
        return float(container.duration) / av.time_base
    durations = [
        float(s.duration * s.time_base)
        for s in (video, audio)
        if s is not None and s.duration is not None and s.time_base is not None
    ]
    return max(durations, default=0.0)


def _packets_end(
    container: av.container.InputContainer,
    streams: list[av.stream.Stream],
    *,
    origin: float,
    declared: float,
) -> tuple[float, float] | None:
    """Where the last packet of ``streams`` ends, from the file start, measured (its
    length at most its stream's longest other packet's) and as its own duration claims;
    None if unknown.

    Reads from the declared end; when no packet is there, from the last time that still
    has one (:func:`_readable_until`): an MP4 cut short keeps its whole sample table at
    the front, so it declares the full length and its demuxer ends, without an error,
    where the bytes do.
    """
    if not streams or declared <= 0:
        return None
    last = _last_packets(container, streams, origin=origin, at=declared)
    if last == {}:
        at = _readable_until(container, streams, origin=origin, declared=declared)
        last = _last_packets(container, streams, origin=origin, at=at)
    if not last:
        return None
    measured = max(start + min(length, longest) for start, length, longest in last.values())
    return measured, max(start + length for start, length, _ in last.values())


def _last_packets(
    container: av.container.InputContainer,
    streams: list[av.stream.Stream],
    *,
    origin: float,
    at: float,
) -> dict[int, tuple[float, float, float]] | None:
    """Each stream's last packet from ``at`` on: its start, its length, and the longest
    length of the stream's other packets read (its own when it is the only one); None if
    unknown.

    Seeks to ``at`` (backward, so to the last seek point before it) and reads at most
    ``_END_SEARCH_PACKETS`` packets from there; running out of that budget, or a failed
    seek, leaves the end unknown rather than guessed short.
    """
    last: dict[int, tuple[float, float]] = {}  # stream -> the latest start, its length
    longest: dict[int, float] = {}  # stream -> the longest length of its other packets
    try:
        container.seek(int((origin + at) * av.time_base), backward=True, any_frame=False)
        for count, packet in enumerate(container.demux(streams)):
            if count >= _END_SEARCH_PACKETS:
                return None
            if packet.pts is None or packet.time_base is None:
                continue
            start = float(packet.pts * packet.time_base) - origin
            length = float((packet.duration or 0) * packet.time_base)
            index = packet.stream.index
            before = last.get(index)
            if before is None or start >= before[0]:
                if before is not None:
                    longest[index] = max(longest.get(index, 0.0), before[1])
                last[index] = (start, length)
            else:
                longest[index] = max(longest.get(index, 0.0), length)
    except av.error.FFmpegError as exc:
        logger.debug("%s: cannot look for the last packet (%s)", container.name, exc)
        return None
    return {i: (start, length, longest.get(i, length)) for i, (start, length) in last.items()}


def _readable_until(
    container: av.container.InputContainer,
    streams: list[av.stream.Stream],
    *,
    origin: float,
    declared: float,
) -> float:
    """A time, within :data:`_DECLARED_SLACK_S` of the end of the bytes, from which
    ``streams`` still have a packet: halving the span between the start (where one is)
    and ``declared`` (where none is), one seek and one packet each time."""
    has, lacks = 0.0, declared
    while lacks - has > _DECLARED_SLACK_S:
        middle = (has + lacks) / 2
        try:
            container.seek(int((origin + middle) * av.time_base), backward=True, any_frame=False)
            found = any(packet.pts is not None for packet in container.demux(streams))
        except av.error.FFmpegError:
            found = False
        has, lacks = (middle, lacks) if found else (has, middle)
    return has


def audio_stream(
    container: av.container.InputContainer, path: Path, track: int = 1
) -> av.audio.stream.AudioStream:
    """The audio stream players list as ``track`` (from 1).

    Raises:
        UnsupportedMediaError: the file has no audio stream, or fewer than ``track``.
    """
    streams = container.streams.audio
    if not streams:
        raise UnsupportedMediaError(path, "no audio stream")
    if not 1 <= track <= len(streams):
        raise UnsupportedMediaError(path, f"has {len(streams)} audio track(s), no track {track}")
    return streams[track - 1]


def _tag(stream: av.stream.Stream, key: str) -> str | None:
    """A stream's metadata tag, None when it is missing or ``und`` (undetermined)."""
    value = str(stream.metadata.get(key, "")).strip()
    return value if value and value != "und" else None


def _frame_rate(video: av.video.stream.VideoStream | None) -> float | None:
    if video is None or not video.average_rate:
        return None
    return float(video.average_rate)


def ffmpeg_reason(exc: av.error.FFmpegError) -> str:
    """PyAV's error as a short lower-case reason for a one-line message."""
    return (exc.strerror or type(exc).__name__).strip().rstrip(".").lower()
