"""Cutting a recording into overlapping clips short enough for a multimodal embedding.

Gemini Embedding 2 takes at most 120 s of video (80 s is safer when the video has
an audio track) and 80 s of audio per input, so a recording is embedded as a
series of windows of at most ``max_seconds`` that overlap by ``overlap_seconds``:
a moment near a boundary lies whole inside at least one clip.

How exact the boundaries are:

- **Audio clips** are always re-encoded (MP3 or WAV, mono), which is exact to
  the audio frame (about 1/40 s).
- **Video clips** are first cut by stream copy (no re-encoding: fast and
  lossless). A copy can only start on a keyframe, so the clip starts at the
  keyframe at or before the window's start; the :class:`Clip` records that
  real start. When that keyframe lies more than ``max_copy_shift`` seconds back
  (3 s by default, and never more than half of ``max_seconds - overlap_seconds``),
  when the codecs are not ones the model surely reads in MP4 (H.264, HEVC, AV1,
  VP9, MPEG-4 video; AAC or MP3 audio), or when the copy fails, the window is
  re-encoded to H.264/AAC instead, exact to the frame. A copied clip never exceeds
  ``max_seconds`` (its end moves back with its start), and each window starts
  ``overlap_seconds`` before the previous clip's real end, so the overlap holds
  and the last clip always reaches the end of the file. Container timestamps
  may add a few hundredths of a second (encoder priming) to a clip's length.
  A failed copy re-encodes the same window, so the windows depend only on the
  file (:func:`plan_windows`, a pure function).

The windows end by construction, whatever the container reports: each one starts
at least ``max_seconds - overlap_seconds - max_copy_shift`` after the previous one,
their number is bounded by :func:`max_window_count` up front, and a window ending
within a millisecond of the duration is the last (times are kept to the millisecond,
so a duration of 39.9884 s must not wait for a clip to end at 39.9884 s).

Times are seconds from the start of the source file, the timeline ffmpeg's ``-ss``
and the rest of this package use. Output names derive from the source's content
hash and the clip's window, so cutting the same file again reuses the clips
already on disk; files are written under a temporary name and renamed when
complete, so an interrupted run never leaves a truncated clip behind.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Final, Literal

import av

from llama_index_video.errors import MediaError, MissingDependencyError, UnsupportedMediaError
from llama_index_video.media.ffmpeg import ffmpeg_executable, run_ffmpeg
from llama_index_video.media.limits import DEFAULT_WINDOWS, VIDEO_WITH_AUDIO_SECONDS
from llama_index_video.media.names import clip_name
from llama_index_video.media.probe import (
    MediaInfo,
    container_start,
    open_container,
    probe,
    video_streams,
)

logger = logging.getLogger(__name__)

ClipModality = Literal["video", "audio"]
AudioFormat = Literal["mp3", "wav"]


_MIMETYPES: Final = {"mp4": "video/mp4", "mp3": "audio/mp3", "wav": "audio/wav"}
# Codecs a stream-copied MP4 may keep (decoder names as PyAV reports them); others are
# re-encoded, because MP4 would also take e.g. MJPEG or MPEG-2 that the model may not read.
_COPY_VIDEO_CODECS: Final = frozenset({"h264", "hevc", "av1", "libdav1d", "vp9", "mpeg4"})
_COPY_AUDIO_CODECS: Final = frozenset({"aac", "mp3", "mp3float"})
_FFMPEG_TIMEOUT: Final = 900.0  # seconds for one clip, re-encoding included
_KEYFRAME_SEARCH_PACKETS: Final = 64
_TIME_RESOLUTION: Final = 0.001  # clip times are kept to the millisecond
_MIN_STEP: Final = 0.01  # seconds windows must advance by at least

KeyframeLookup = Callable[[float], float | None]
"""Time of the keyframe at or before a time (``None``: none found near it)."""


@dataclass(frozen=True)
class Clip:
    """A window of a recording written to its own file.

    Attributes:
        source: The recording the clip was cut from.
        start: Start on the source's timeline, in seconds (a copied video clip
            starts on the keyframe at or before the requested start).
        end: End on the source's timeline, in seconds.
        path: The clip file.
        modality: ``"video"`` (MP4, with the audio track if any) or ``"audio"``.
        mimetype: ``video/mp4``, ``audio/mp3`` or ``audio/wav``.
        content_hash: sha256 of the source file's bytes.
    """

    source: Path
    start: float
    end: float
    path: Path
    modality: ClipModality
    mimetype: str
    content_hash: str

    @property
    def duration(self) -> float:
        """Length of the clip in seconds."""
        return self.end - self.start


def cut_clips(
    path: str | Path,
    *,
    out_dir: str | Path,
    content_hash: str,
    modality: ClipModality = "video",
    max_seconds: float | None = None,
    overlap_seconds: float | None = None,
    audio_format: AudioFormat = "mp3",
    max_copy_shift: float = 3.0,
    info: MediaInfo | None = None,
) -> Iterator[Clip]:
    """Cut ``path`` into overlapping clips, yielding each as soon as it is written.

    Args:
        path: A video or audio file.
        out_dir: Folder for the clips (created if missing). Clips already there
            from an earlier run over the same content are reused, not cut again.
        content_hash: sha256 of the source's bytes (the reader's
            ``reader.ids.content_hash``); it names the clip files.
        modality: ``"video"`` for MP4 clips (video plus audio track), ``"audio"``
            for audio-only clips.
        max_seconds: Longest clip; default 120 s for video, 80 s for audio. Use
            :data:`VIDEO_WITH_AUDIO_SECONDS` (80 s) for video with speech.
        overlap_seconds: Overlap of consecutive clips; default 10 s for video,
            5 s for audio (at most a quarter of ``max_seconds``).
        audio_format: ``"mp3"`` (small) or ``"wav"`` (16-bit PCM) for audio clips.
        max_copy_shift: How far (s) before the requested start a stream-copied
            video clip may begin; beyond that the window is re-encoded.
        info: ``path`` probed, when the caller has probed it already; else it is
            probed here.

    Returns:
        A lazy iterator of :class:`Clip` in time order.

    Raises:
        ValueError: an option is out of range.
        UnsupportedMediaError: the file has no stream of the requested modality.
        MediaError: ffmpeg failed on a window.
        MissingDependencyError: ``ffmpeg-python`` or an ffmpeg binary is missing.
    """
    if modality not in DEFAULT_WINDOWS:
        raise ValueError(f"modality must be 'video' or 'audio', not {modality!r}")
    if audio_format not in ("mp3", "wav"):
        raise ValueError(f"audio_format must be 'mp3' or 'wav', not {audio_format!r}")
    default_max, default_overlap = DEFAULT_WINDOWS[modality]
    max_s = default_max if max_seconds is None else float(max_seconds)
    overlap_s = (
        min(default_overlap, max_s / 4) if overlap_seconds is None else float(overlap_seconds)
    )
    if max_s <= 0:
        raise ValueError(f"max_seconds must be > 0, not {max_s}")
    if not 0 <= overlap_s <= max_s - _MIN_STEP:
        raise ValueError(
            f"overlap_seconds must be >= 0 and < max_seconds ({max_s}), not {overlap_s}"
        )
    if len(content_hash) < 16:
        raise ValueError(f"content_hash must be a hex sha256, not {content_hash!r}")
    if max_copy_shift < 0:
        raise ValueError(f"max_copy_shift must be >= 0, not {max_copy_shift}")
    source = Path(path)
    info = info or probe(source)
    if modality == "video" and not info.has_video:
        raise UnsupportedMediaError(source, "has no video stream; cut audio clips instead")
    if modality == "audio" and not info.has_audio:
        raise UnsupportedMediaError(source, "has no audio stream to cut audio clips from")
    cutter = _Cutter(
        source=source,
        out_dir=Path(out_dir),
        content_hash=content_hash,
        modality=modality,
        extension="mp4" if modality == "video" else audio_format,
        max_seconds=max_s,
        overlap_seconds=overlap_s,
        # Bounded so that every window still advances by at least half a step.
        max_shift=min(max_copy_shift, (max_s - overlap_s) / 2),
        copyable=info.video_codec in _COPY_VIDEO_CODECS
        and (info.audio_codec is None or info.audio_codec in _COPY_AUDIO_CODECS),
        ffmpeg=_ffmpeg_module(),
    )
    return cutter.cut(info.duration)


def _ffmpeg_module() -> ModuleType:
    try:
        import ffmpeg
    except ImportError as exc:
        raise MissingDependencyError("ffmpeg-python", "gemini", "Cutting clips") from exc
    ffmpeg_executable()  # fail now, not at the first window, when there is no binary
    return ffmpeg


@dataclass(frozen=True)
class ClipWindow:
    """One planned clip: ``start`` to ``end`` seconds, stream-copied or re-encoded."""

    start: float
    end: float
    copy: bool


def max_window_count(
    duration: float, *, max_seconds: float, overlap_seconds: float, max_shift: float = 0.0
) -> int:
    """The most windows :func:`plan_windows` yields: ``ceil(duration / step) + 1``.

    ``step = max_seconds - overlap_seconds - max_shift`` is the least a window advances
    (a stream copy may start up to ``max_shift`` before the requested start).
    """
    step = max_seconds - overlap_seconds - max_shift
    return math.ceil(max(duration, 0.0) / step) + 1


def plan_windows(
    duration: float,
    *,
    max_seconds: float,
    overlap_seconds: float,
    max_shift: float = 0.0,
    keyframe_before: KeyframeLookup | None = None,
) -> Iterator[ClipWindow]:
    """The windows covering 0 to ``duration``, in time order.

    Args:
        duration: Length of the recording in seconds.
        max_seconds: Longest window.
        overlap_seconds: Overlap of consecutive windows.
        max_shift: How far before the requested start a stream copy may begin; at
            most half of ``max_seconds - overlap_seconds``.
        keyframe_before: Where a stream copy starting at a time would begin; ``None``
            re-encodes every window (exact starts).

    Each window starts at least ``max_seconds - overlap_seconds - max_shift`` after the
    previous one and ``overlap_seconds`` before its end; there are at most
    :func:`max_window_count` of them, and the last ends at ``duration`` (to the ms).
    """
    step = max_seconds - overlap_seconds - max_shift
    if step < _MIN_STEP or max_shift < 0:
        raise ValueError(
            f"windows must advance: max_seconds ({max_seconds}) - overlap_seconds "
            f"({overlap_seconds}) - max_shift ({max_shift}) must be >= {_MIN_STEP}"
        )
    start = 0.0
    for _ in range(
        max_window_count(
            duration, max_seconds=max_seconds, overlap_seconds=overlap_seconds, max_shift=max_shift
        )
    ):
        first, end, copy = start, min(start + max_seconds, duration), False
        keyframe = keyframe_before(start) if keyframe_before is not None else None
        if keyframe is not None and start - max_shift <= keyframe <= start:
            first, end, copy = keyframe, min(end, keyframe + max_seconds), True
        yield _to_the_millisecond(first, end, max_seconds, copy=copy)
        if end >= duration - _TIME_RESOLUTION:
            return
        # Planned on exact times (rounding each step would lose up to 0.5 ms a window
        # and run out of the bound before the end); the max() only guards against float
        # error: a window ends at least max - shift after the requested start.
        start = max(end - overlap_seconds, start + step)


def _to_the_millisecond(start: float, end: float, max_seconds: float, *, copy: bool) -> ClipWindow:
    """The window with times rounded to the ms, never longer than ``max_seconds``."""
    first, last = round(start, 3), round(end, 3)
    if last - first > max_seconds:
        last = round(last - _TIME_RESOLUTION, 3)
    return ClipWindow(first, last, copy=copy)


@dataclass(frozen=True)
class _Cutter:
    source: Path
    out_dir: Path
    content_hash: str
    modality: ClipModality
    extension: str
    max_seconds: float
    overlap_seconds: float
    max_shift: float
    copyable: bool
    ffmpeg: ModuleType

    def cut(self, duration: float) -> Iterator[Clip]:
        """Clips covering 0 to ``duration`` (see :func:`plan_windows`)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            keyframe_before: KeyframeLookup | None = None
            stream_map = "a:0"
            if self.modality == "video":
                container = stack.enter_context(open_container(self.source))
                video = _main_video_stream(container)
                stream_map = str(video.index)
                if self.copyable:
                    keyframe_before = functools.partial(_keyframe_at_or_before, container, video)
            for window in plan_windows(
                duration,
                max_seconds=self.max_seconds,
                overlap_seconds=self.overlap_seconds,
                max_shift=self.max_shift,
                keyframe_before=keyframe_before,
            ):
                yield self._clip(window, stream_map=stream_map)

    def _clip(self, window: ClipWindow, *, stream_map: str) -> Clip:
        clip = self._describe(window)
        if clip.path.exists():
            logger.debug("reusing %s", clip.path)
            return clip
        try:
            self._write(window, clip.path, stream_map)
        except MediaError as exc:
            if not window.copy:
                raise
            logger.info("stream copy failed for %s, re-encoding: %s", clip.path.name, exc.reason)
            self._write(ClipWindow(window.start, window.end, copy=False), clip.path, stream_map)
        return clip

    def _describe(self, plan: ClipWindow) -> Clip:
        name = clip_name(self.content_hash, self.modality, plan.start, plan.end, self.extension)
        return Clip(
            source=self.source,
            start=plan.start,
            end=plan.end,
            path=self.out_dir / name,
            modality=self.modality,
            mimetype=_MIMETYPES[self.extension],
            content_hash=self.content_hash,
        )

    def _write(self, plan: ClipWindow, target: Path, stream_map: str) -> None:
        partial = target.with_name(f".{target.stem}.partial{target.suffix}")
        ffmpeg = self.ffmpeg
        stream = ffmpeg.input(str(self.source.absolute()), ss=f"{plan.start:.6f}")
        options: dict[str, str] = {"t": f"{plan.end - plan.start:.6f}"}
        if self.modality == "audio":
            streams = [stream[stream_map]]
            options.update(_AUDIO_OPTIONS[self.extension])
        else:
            streams = [stream[stream_map], stream["a:0?"]]
            options.update(_COPY_OPTIONS if plan.copy else _ENCODE_OPTIONS)
        command = (
            ffmpeg.output(*streams, str(partial), **options)
            .global_args("-nostdin", "-hide_banner", "-loglevel", "error")
            .overwrite_output()
            .compile(cmd=ffmpeg_executable())
        )
        try:
            run_ffmpeg(command, source=self.source, timeout=_FFMPEG_TIMEOUT)
            if not partial.exists() or partial.stat().st_size == 0:
                raise MediaError(self.source, f"ffmpeg wrote no data for {target.name}")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        logger.debug("wrote %s (%s)", target, "copy" if plan.copy else "encoded")


_COPY_OPTIONS: Final = {"c": "copy", "avoid_negative_ts": "make_zero", "movflags": "+faststart"}
_ENCODE_OPTIONS: Final = {
    "c:v": "libx264",
    "preset": "veryfast",
    "crf": "23",
    "pix_fmt": "yuv420p",
    "c:a": "aac",
    "b:a": "128k",
    "movflags": "+faststart",
}
_AUDIO_OPTIONS: Final = {
    "mp3": {"c:a": "libmp3lame", "b:a": "64k", "ar": "24000", "ac": "1"},
    "wav": {"c:a": "pcm_s16le", "ar": "16000", "ac": "1"},
}


def _main_video_stream(container: av.container.InputContainer) -> av.video.stream.VideoStream:
    # probe() already refused files whose only video stream is cover art.
    return video_streams(container)[0]


def _keyframe_at_or_before(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    seconds: float,
) -> float | None:
    """Time of the keyframe a stream copy starting at ``seconds`` would begin on."""
    if seconds <= 0:
        return 0.0
    origin = container_start(container)
    time_base: Fraction = stream.time_base or Fraction(1, av.time_base)
    try:
        container.seek(
            int((seconds + origin) / time_base), stream=stream, backward=True, any_frame=False
        )
        for count, packet in enumerate(container.demux(stream)):
            if count >= _KEYFRAME_SEARCH_PACKETS:
                break
            if packet.pts is not None and packet.is_keyframe:
                found = float(packet.pts * time_base) - origin
                return max(0.0, found) if found <= seconds else None
    except av.error.FFmpegError as exc:
        logger.debug("keyframe search in %s failed at %.2f s: %s", container.name, seconds, exc)
    return None


__all__ = [
    "DEFAULT_WINDOWS",
    "VIDEO_WITH_AUDIO_SECONDS",
    "AudioFormat",
    "Clip",
    "ClipModality",
    "ClipWindow",
    "cut_clips",
    "max_window_count",
    "plan_windows",
]
