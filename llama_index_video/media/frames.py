"""Sampling the frames worth keeping: at a fixed interval and at scene changes.

A fixed 5 s sampler (the reference recipe) misses a slide shown for 1.5 s between
two samples; a sampler that keeps every frame stores a static slide a hundred times.
So every decoded frame is considered at ``analysis_fps``: a small grayscale thumbnail
is compared with the previous one (scene change) and with the last frame kept
(near-duplicate). The measure is the share of thumbnail pixels that changed clearly,
not the mean difference: a new line of text on a slide of the same template moves
the mean by a few levels but changes a tenth of the picture, while camera noise
changes no pixel by that much. A scene change is kept once the picture has settled, so a
crossfade yields the slide rather than the blend. Each kept :class:`Frame` spans
until the next kept one, i.e. how long that picture stayed on screen.

Frames are JPEG files under ``out_dir`` named by content hash and time, so sampling
the same file again writes the same names. They are stored upright: a video with
rotation metadata (a phone held upright records landscape pixels plus "rotate 90")
is turned the way a player shows it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import av
import numpy as np

from llama_index_video.errors import MediaDecodeError, UnsupportedMediaError
from llama_index_video.media.names import frame_name
from llama_index_video.media.probe import (
    container_start,
    decoded_frames,
    open_container,
    video_streams,
)

logger = logging.getLogger(__name__)

_THUMB_SIZE = (64, 36)
_PIXEL_DELTA = 20.0  # grey levels (0-255) that count as a clear change of one pixel


@dataclass(frozen=True)
class Frame:
    """A kept frame: shown from ``time`` until ``end`` (seconds), stored at ``path``."""

    time: float
    end: float
    path: Path
    width: int
    height: int
    reason: Literal["interval", "scene"]


@dataclass(frozen=True, kw_only=True)
class FrameSamplingOptions:
    """How frames are chosen and stored.

    Attributes:
        interval: Seconds between fixed samples (0 disables them).
        scene_detection: Also keep a frame when the picture changes.
        scene_threshold: Share of the picture (0-1) that must change between two
            analysed frames to count as a scene change.
        duplicate_threshold: A candidate differing from the last kept frame in less
            than this share of the picture is skipped as a near-duplicate.
        analysis_fps: How many frames per second are compared (decoding is unaffected).
        max_side: Longest side of the stored JPEG, in pixels.
        jpeg_quality: JPEG quality (1-95).
    """

    interval: float = 5.0
    scene_detection: bool = True
    scene_threshold: float = 0.05
    duplicate_threshold: float = 0.02
    analysis_fps: float = 5.0
    max_side: int = 1280
    jpeg_quality: int = 85

    def __post_init__(self) -> None:
        if self.interval < 0:
            raise ValueError(f"interval must be >= 0, got {self.interval}")
        if self.analysis_fps <= 0:
            raise ValueError(f"analysis_fps must be > 0, got {self.analysis_fps}")
        if not 0 < self.duplicate_threshold <= self.scene_threshold <= 1:
            raise ValueError("need 0 < duplicate_threshold <= scene_threshold <= 1")
        if not 1 <= self.jpeg_quality <= 95:
            raise ValueError(f"jpeg_quality must be in 1..95, got {self.jpeg_quality}")
        if self.max_side < 16:
            raise ValueError(f"max_side must be >= 16, got {self.max_side}")


@dataclass
class _Candidate:
    time: float
    frame: av.VideoFrame
    thumb: np.ndarray
    reason: Literal["interval", "scene"]


def sample_frames(
    path: str | Path,
    *,
    out_dir: str | Path,
    name_prefix: str,
    options: FrameSamplingOptions | None = None,
    duration: float | None = None,
    start: float = 0.0,
    end: float | None = None,
) -> Iterator[Frame]:
    """Yield the kept frames of ``path`` in time order, writing each as a JPEG.

    Args:
        path: The video file.
        out_dir: Folder for the JPEG files (created if missing).
        name_prefix: Start of every file name, e.g. the video's content hash.
        options: Sampling options; defaults to :class:`FrameSamplingOptions`.
        duration: The file's duration, so the last frame's span reaches the end.
        start: Sample from this second on (a file still growing is read a span at a
            time); the span's first frame is always kept.
        end: Sample the frames before this second only; the last one's span ends here.

    Raises:
        UnsupportedMediaError: the file has no video stream.
        MediaDecodeError: no frame could be decoded.
    """
    path, out_dir = Path(path), Path(out_dir)
    options = options or FrameSamplingOptions()
    out_dir.mkdir(parents=True, exist_ok=True)
    sampler = _Sampler(options)
    kept: _Candidate | None = None
    last_time = 0.0
    for time, frame in _decode(path, options.analysis_fps, start=start, end=end):
        last_time = time
        for candidate in sampler.feed(time, frame):
            if kept is not None:
                yield _store(kept, candidate.time, out_dir, name_prefix, options)
            kept = candidate
    for candidate in sampler.flush():
        if kept is not None:
            yield _store(kept, candidate.time, out_dir, name_prefix, options)
        kept = candidate
    if kept is not None:
        until = end if end is not None else max(duration or 0.0, last_time, kept.time)
        yield _store(kept, until, out_dir, name_prefix, options)


class _Sampler:
    """Decides which analysed frames to keep; pure logic over thumbnails."""

    def __init__(self, options: FrameSamplingOptions) -> None:
        self._options = options
        self._previous: np.ndarray | None = None
        self._kept_thumb: np.ndarray | None = None
        self._pending_scene: _Candidate | None = None
        self._next_interval = 0.0

    def feed(self, time: float, frame: av.VideoFrame) -> Iterator[_Candidate]:
        thumb = _thumbnail(frame)
        opts = self._options
        changed = self._previous is not None and _distance(thumb, self._previous) > (
            opts.scene_threshold
        )
        self._previous = thumb
        if self._pending_scene is not None and not changed:
            # The picture settled after a cut: keep the settled frame's look, cut's time.
            pending, self._pending_scene = self._pending_scene, None
            pending.frame, pending.thumb = frame, thumb
            yield from self._keep(pending)
        if changed and opts.scene_detection:
            self._pending_scene = _Candidate(time, frame, thumb, "scene")
        if opts.interval and time >= self._next_interval:
            self._next_interval = (time // opts.interval + 1) * opts.interval
            if self._pending_scene is None:
                yield from self._keep(_Candidate(time, frame, thumb, "interval"))
        elif self._kept_thumb is None and self._pending_scene is None:
            yield from self._keep(_Candidate(time, frame, thumb, "interval"))

    def flush(self) -> Iterator[_Candidate]:
        if self._pending_scene is not None:
            pending, self._pending_scene = self._pending_scene, None
            yield from self._keep(pending)

    def _keep(self, candidate: _Candidate) -> Iterator[_Candidate]:
        if self._kept_thumb is not None and (
            _distance(candidate.thumb, self._kept_thumb) < self._options.duplicate_threshold
        ):
            return
        self._kept_thumb = candidate.thumb
        yield candidate


def _decode(
    path: Path, analysis_fps: float, *, start: float, end: float | None
) -> Iterator[tuple[float, av.VideoFrame]]:
    """Decoded frames from ``start`` to before ``end``, at most ``analysis_fps`` per
    second, times relative to the file start."""
    with open_container(path) as container:
        streams = video_streams(container)
        if not streams:
            raise UnsupportedMediaError(path, "no video stream")
        stream = streams[0]
        # No frame threads: frames are read beside speech recognition, which keeps the
        # cores busy, and FFmpeg's frame threads spent 0.8 CPU s on the example videos'
        # 140 s where slice threading spends 0.5 for the very same frames.
        stream.thread_type = "SLICE"
        origin = container_start(container)
        if start > 0:
            container.seek(int((start + origin) * av.time_base), backward=True)
        step = 1.0 / analysis_fps
        next_time = start
        decoded = 0
        for frame in decoded_frames(container, stream, path, "video"):
            if frame.pts is None or frame.time_base is None:
                continue
            time = max(0.0, float(frame.pts * frame.time_base) - origin)
            decoded += 1
            if end is not None and time >= end:
                break
            if time + 1e-6 >= next_time:
                next_time = time + step
                yield time, frame
        if decoded == 0:
            raise MediaDecodeError(path, "no video frame could be decoded")


def _thumbnail(frame: av.VideoFrame) -> np.ndarray:
    width, height = _THUMB_SIZE
    small = frame.reformat(width=width, height=height, format="gray", interpolation="AREA")
    return small.to_ndarray().astype(np.float32)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return float((np.abs(a - b) > _PIXEL_DELTA).mean())


def _store(
    candidate: _Candidate, end: float, out_dir: Path, prefix: str, options: FrameSamplingOptions
) -> Frame:
    image = candidate.frame.to_image()
    if candidate.frame.rotation:  # display matrix, as a phone held upright writes it
        image = image.rotate(candidate.frame.rotation, expand=True)
    image.thumbnail((options.max_side, options.max_side))
    target = out_dir / frame_name(prefix, candidate.time)
    if not target.exists():
        partial = target.with_suffix(".part")
        image.save(partial, format="JPEG", quality=options.jpeg_quality)
        partial.replace(target)
    return Frame(
        time=round(candidate.time, 3),
        end=round(max(end, candidate.time), 3),
        path=target,
        width=image.width,
        height=image.height,
        reason=candidate.reason,
    )
