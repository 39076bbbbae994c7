"""Streams recorded to a growing file while they play: ``ingest --live URL`` (issue 37).

A stream (an HLS playlist, an RTSP camera or server, an HTTP or Icecast audio stream:
any URL PyAV's bundled FFmpeg opens) cannot be read twice, so :func:`record_stream`
copies its audio and video packets as they arrive, without decoding them, into a
Matroska file flushed every second. :func:`llama_index_video.live.ingest_live` follows
that file like any recording still being written, and ingests it whole once the stream
has ended; it stays in the index folder (``media/downloads``), so clips and the page play it.

A restarted recording goes on where the last run's copy ends:

- an HLS playlist still lists the segments already played (an ``EVENT`` playlist
  keeps them all; FFmpeg is asked to start at the first, ``live_start_index=0``), so it
  is *replayed*: the copy is written again from the start, with the same times;
- a stream that plays only from now (Icecast, RTSP) is *appended*: the packets of the old
  copy are kept, and the new ones follow them. The time it was down is not in the
  recording: a moment's time counts the seconds recorded, not the wall clock.

Every wait is bounded: a read waits at most ``idle`` seconds for data (then the
stream is silent and the recording ends), and the copy ends at ``stop``, at the
``deadline`` (``time.monotonic()``) or once ``max_bytes`` are written.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import av

from llama_index_video.errors import DownloadError
from llama_index_video.media.probe import ffmpeg_reason
from llama_index_video.sources.origin import redact

logger = logging.getLogger(__name__)

COPY_FORMAT = "matroska"
"""What a stream is copied into: readable while it grows, takes any codec."""
GROWING_OPTIONS = {"flush_packets": "1", "cluster_time_limit": "1000"}
"""Matroska muxer options that make a file readable while it is written: a cluster a
second, flushed at once. (Not ``live``: it writes no codec headers that come only
with the first packets, as AAC's from an MPEG-TS stream do.)"""
OPEN_SECONDS = 30.0
"""How long opening a stream may take (PyAV also applies it to the first reads: an HLS
playlist is probed over its first segments)."""
REPLAYED_FORMATS = frozenset({"hls"})
"""Demuxers that play a restarted stream from its first segment again."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RecordedStream:
    """What :func:`record_stream` wrote: the copy, its length, and why it ended."""

    path: Path
    seconds: float
    bytes: int
    ended: str


def is_stream(source: str) -> bool:
    """Whether ``source`` is a URL to record, not a file path."""
    return "://" in source and not source.startswith("file://")


def stream_copy_name(url: str, started: str) -> str:
    """The copy's file name: the stream's host and path, and when its recording started
    (``started``, e.g. ``20261206-0930``), so a later recording of the same URL gets
    its own file. Nothing from the query or user info (they may hold a token)."""
    parts = urlsplit(redact(url))
    stem = _UNSAFE.sub("-", f"{parts.netloc}{parts.path}").strip("-.")[:80] or "stream"
    return f"{stem}-{started}.mkv"


def record_stream(
    url: str,
    target: Path,
    *,
    idle: float,
    deadline: float,
    max_bytes: int | None,
    stop: threading.Event,
) -> RecordedStream:
    """Copy ``url``'s first audio and video streams into ``target`` until it ends.

    Args:
        url: What PyAV opens (``http://host/live.m3u8``, an Icecast mount...).
        target: The Matroska copy; one left by an earlier run is replayed or appended to.
        idle: Seconds a read waits for data before the stream counts as ended.
        deadline: ``time.monotonic()`` at which the recording ends, whatever the stream.
        max_bytes: The recording ends once this many bytes of packets are written.
        stop: Set to end the recording now.

    Raises:
        DownloadError: the stream cannot be opened or has no audio.
    """
    shown = redact(url)
    try:
        opening = max(idle, OPEN_SECONDS)
        source = av.open(url, options={"live_start_index": "0"}, timeout=(opening, idle))
    except av.error.FFmpegError as exc:
        raise DownloadError(shown, f"cannot open the stream ({ffmpeg_reason(exc)})") from exc
    with source:
        if not source.streams.audio:
            raise DownloadError(shown, "the stream has no audio to transcribe")
        inputs = [source.streams.audio[0], *source.streams.video[:1]]
        replayed = source.format.name in REPLAYED_FORMATS
        old = target.with_name(target.stem + ".before-restart.mkv")
        if target.exists() and not replayed:
            target.replace(old)
        target.parent.mkdir(parents=True, exist_ok=True)
        with av.open(
            str(target), "w", format=COPY_FORMAT, container_options=GROWING_OPTIONS
        ) as copy:
            outputs = [copy.add_stream_from_template(s) for s in inputs]
            kept = _copy_old(old, copy, outputs) if old.exists() else 0.0
            old.unlink(missing_ok=True)
            return _copy_packets(
                source, copy, inputs, outputs, target=target, shift_to=kept,
                limits=(deadline, max_bytes, stop, idle),
            )  # fmt: skip


def _copy_old(old: Path, copy: av.container.OutputContainer, outputs: list) -> float:
    """Write the packets of the last run's copy into ``copy``; returns where they end."""
    end = 0.0
    try:
        with av.open(str(old)) as before:
            for packet in before.demux():
                if packet.dts is None or packet.stream.index >= len(outputs):
                    continue
                end = max(end, float((packet.pts or packet.dts) * packet.time_base))
                packet.stream = outputs[packet.stream.index]
                copy.mux(packet)
    except av.error.FFmpegError:
        logger.debug("%s: the last run's copy ends in a cut-off packet", old)
    return end


def _copy_packets(
    source: av.container.InputContainer,
    copy: av.container.OutputContainer,
    inputs: list,
    outputs: list,
    *,
    target: Path,
    shift_to: float,
    limits: tuple[float, int | None, threading.Event, float],
) -> RecordedStream:
    """Mux ``source``'s packets into ``copy`` until a limit or the stream's end; each
    packet's time moves by where the kept packets end (``shift_to``) minus the first
    new packet's time, so appended packets follow the old ones."""
    deadline, max_bytes, stop, idle = limits
    out_of = {s.index: out for s, out in zip(inputs, outputs, strict=True)}
    written, last, shift = 0, 0.0, None
    ended = "end of stream"
    try:
        for packet in source.demux(*inputs):
            if stop.is_set():
                ended = "stopped"
                break
            if time.monotonic() >= deadline:
                ended = "time limit"
                break
            if packet.dts is None or packet.time_base is None:
                continue  # a demuxer's flush packet
            if shift is None:
                shift = shift_to - float(packet.dts * packet.time_base) if shift_to else 0.0
            if shift:
                ticks = round(shift / packet.time_base)
                packet.dts += ticks
                packet.pts = None if packet.pts is None else packet.pts + ticks
            last = max(last, float((packet.pts or packet.dts) * packet.time_base))
            written += packet.size
            packet.stream = out_of[packet.stream.index]
            copy.mux(packet)
            if max_bytes is not None and written >= max_bytes:
                ended = f"byte budget ({max_bytes} bytes)"
                break
    except av.error.ExitError:
        ended = f"no data for {idle:g} s"
    except av.error.FFmpegError as exc:
        ended = f"stream error ({ffmpeg_reason(exc)})"
    return RecordedStream(target, max(last, shift_to), written, ended)
