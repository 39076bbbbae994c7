"""Decoding audio to 16 kHz mono float32, the input every speech model here expects.

PyAV decodes and resamples in bounded blocks, so memory stays proportional to one
chunk, not to the recording: :func:`iter_audio_chunks` yields pieces of at most
``chunk_seconds`` cut at the quietest moment near the limit, so a word is rarely
split between two chunks. The timeline follows the stream's timestamps: a gap in
the stream becomes silence, so times stay true to the source. It ends at the probed
duration: decoders pad the last frame (AAC by up to 1024 samples), and speech found
in that padding would be timed after the end of the file.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np

from llama_index_video.errors import UnsupportedMediaError
from llama_index_video.media.probe import (
    audio_stream,
    container_start,
    decoded_frames,
    open_container,
    probe,
)

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
_GAP_TOLERANCE_S = 0.25
_SILENCE_BLOCK = 10 * SAMPLE_RATE  # a gap is filled in blocks of at most this many samples


@dataclass(frozen=True)
class AudioChunk:
    """Samples (16 kHz mono float32) starting at ``start`` seconds on the source timeline.

    ``lead_in`` is the audio just before ``start`` (the end of the chunk before, with
    ``lead_in_seconds`` of :func:`iter_audio_chunks`), empty for the first chunk: context
    only, for a transcriber to hear what was said just before (its prompt).
    """

    start: float
    samples: np.ndarray
    lead_in: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))

    @property
    def end(self) -> float:
        return self.start + len(self.samples) / SAMPLE_RATE


def decode_audio(path: str | Path, *, track: int = 1) -> np.ndarray:
    """Decode a whole file's audio ``track`` (from 1) to 16 kHz mono float32, from time 0.

    Fine for short files; prefer :func:`iter_audio_chunks` for long recordings.
    """
    parts = [chunk.samples for chunk in iter_audio_chunks(path, chunk_seconds=None, track=track)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def iter_audio_chunks(
    path: str | Path,
    *,
    chunk_seconds: float | None = 600.0,
    search_seconds: float = 10.0,
    track: int = 1,
    channel: int | None = None,
    lead_in_seconds: float = 0.0,
    duration: float | None = None,
) -> Iterator[AudioChunk]:
    """Yield the audio as consecutive chunks of at most ``chunk_seconds`` (None: one chunk).

    The first chunk starts at 0.0 (leading silence included) so sample offsets map to
    source time. Each cut lands on the quietest 100 ms within ``search_seconds`` of the
    limit. ``track`` is the audio track, from 1, as players number them; its channels
    are mixed down to one, or only ``channel`` (from 0: left, right, ...) is kept. Each
    chunk after the first carries the last ``lead_in_seconds`` of the one before as its
    ``lead_in`` (at most that chunk). The audio ends at ``duration``, the file's probed
    duration: a caller that has probed the file passes it, else it is probed here.

    Raises:
        UnsupportedMediaError: no audio stream, or none numbered ``track``.
        MediaDecodeError: nothing could be decoded.
    """
    path = Path(path)
    limit = None if chunk_seconds is None else int(chunk_seconds * SAMPLE_RATE)
    search = int(search_seconds * SAMPLE_RATE)
    buffer: list[np.ndarray] = []
    buffered = 0
    chunk_start = 0  # in samples
    lead = round(lead_in_seconds * SAMPLE_RATE)
    before = np.zeros(0, dtype=np.float32)
    for block in _iter_resampled(path, track, channel, duration):
        buffer.append(block)
        buffered += len(block)
        while limit is not None and buffered >= limit:
            samples = np.concatenate(buffer)
            cut = _quietest_cut(samples[:limit], search)
            yield AudioChunk(chunk_start / SAMPLE_RATE, samples[:cut], before)
            before = samples[max(0, cut - lead) : cut] if lead else before
            chunk_start += cut
            buffer, buffered = [samples[cut:]], len(samples) - cut
    if buffered:
        yield AudioChunk(chunk_start / SAMPLE_RATE, np.concatenate(buffer), before)


def decode_audio_span(path: str | Path, start: float, seconds: float) -> AudioChunk:
    """The audio from ``start`` for at most ``seconds``, of a file that may still grow.

    Seeks to ``start`` and decodes what is there: fewer samples than asked for when the
    file ends (or has not been written further yet). A packet cut off at the end of a
    file still being written ends the span instead of failing it.

    Raises:
        UnsupportedMediaError: no audio stream.
    """
    path = Path(path)
    wanted = int(seconds * SAMPLE_RATE)
    parts: list[np.ndarray] = []
    got = 0
    with open_container(path) as container:
        stream = audio_stream(container, path)
        origin = container_start(container)
        if start > 0:
            container.seek(int((start + origin) * av.time_base), backward=True)
        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
        position: float | None = None  # source time of the next resampled sample
        try:
            for frame in container.decode(stream):
                if position is None and frame.pts is not None and frame.time_base is not None:
                    position = float(frame.pts * frame.time_base) - origin
                for out in resampler.resample(frame):
                    block = out.to_ndarray().reshape(-1).astype(np.float32, copy=False)
                    skip = max(0, round((start - (position or 0.0)) * SAMPLE_RATE))
                    position = (position or 0.0) + len(block) / SAMPLE_RATE
                    block = block[skip : skip + wanted - got]
                    parts.append(block)
                    got += len(block)
                if got >= wanted:
                    break
        except av.error.FFmpegError:
            logger.debug("%s: decoding stopped at a cut-off packet", path)
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return AudioChunk(start, samples)


def _iter_resampled(
    path: Path, track: int, channel: int | None, duration: float | None
) -> Iterator[np.ndarray]:
    """Decoded float32 blocks on a gap-free timeline from 0.0 to the probed ``duration``
    (None: probed here): the channels mixed to one, or ``channel`` alone."""
    with open_container(path) as container:
        stream = audio_stream(container, path, track)
        total = round((probe(path).duration if duration is None else duration) * SAMPLE_RATE)
        if channel is None:
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            plane = 0
        else:
            layout = stream.codec_context.layout
            if not 0 <= channel < len(layout.channels):
                raise UnsupportedMediaError(path, f"audio track {track} has no channel {channel}")
            resampler = av.AudioResampler(format="fltp", layout=layout.name, rate=SAMPLE_RATE)
            plane = channel
        origin = container_start(container)
        emitted = 0

        def until_end(block: np.ndarray) -> np.ndarray:
            nonlocal emitted
            block = block[: max(0, total - emitted)]
            emitted += len(block)
            return block

        for frame in decoded_frames(container, stream, path, "audio"):
            if frame.pts is not None and frame.time_base is not None:
                frame_time = float(frame.pts * frame.time_base) - origin
                gap = min(int((frame_time - emitted / SAMPLE_RATE) * SAMPLE_RATE), total - emitted)
                if gap > _GAP_TOLERANCE_S * SAMPLE_RATE:
                    for start in range(0, gap, _SILENCE_BLOCK):
                        yield until_end(np.zeros(min(_SILENCE_BLOCK, gap - start), np.float32))
            for out in resampler.resample(frame):
                yield until_end(out.to_ndarray()[plane].astype(np.float32, copy=False))
            if emitted >= total:
                return
        for out in resampler.resample(None):
            yield until_end(out.to_ndarray()[plane].astype(np.float32, copy=False))


def _quietest_cut(samples: np.ndarray, search: int) -> int:
    """Index within the last ``search`` samples where a 100 ms window is quietest."""
    window = SAMPLE_RATE // 10
    tail = samples[-search:] if search < len(samples) else samples
    usable = len(tail) - len(tail) % window
    if usable < window:
        return len(samples)
    energy = np.square(tail[len(tail) - usable :].reshape(-1, window)).mean(axis=1)
    quietest = int(np.argmin(energy))
    return len(samples) - usable + quietest * window + window // 2
