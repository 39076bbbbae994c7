"""Small media files written by PyAV for tests: coloured frames, a sine tone, a JPEG.

Each second of video has its own flat colour (see :data:`COLOURS`), so a test can
tell from a decoded frame which second of the source a clip starts in.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

COLOURS = [(220, 40, 40), (40, 200, 60), (40, 80, 220), (230, 210, 40), (200, 60, 200)]
SAMPLE_RATE = 16_000


def write_video(
    path: Path,
    *,
    seconds: float,
    fps: int = 10,
    gop: int = 20,
    size: tuple[int, int] = (64, 48),
    tone_hz: float | None = 440.0,
) -> Path:
    """An H.264/AAC video (container from the suffix) with a keyframe every ``gop`` frames."""
    with av.open(str(path), mode="w") as container:
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height = size
        video.pix_fmt = "yuv420p"
        video.codec_context.gop_size = gop
        video.codec_context.options = {"keyint_min": str(gop), "sc_threshold": "0", "bf": "0"}
        audio = container.add_stream("aac", rate=SAMPLE_RATE) if tone_hz else None
        if audio is not None:
            audio.layout = "mono"
        for index in range(round(seconds * fps)):
            colour = COLOURS[int(index / fps) % len(COLOURS)]
            pixels = np.full((size[1], size[0], 3), colour, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts = index
            frame.time_base = Fraction(1, fps)
            container.mux(video.encode(frame))
        container.mux(video.encode(None))
        if audio is not None and tone_hz:
            _write_tone(container, audio, seconds, tone_hz)
    return path


def write_audio(path: Path, *, seconds: float, tone_hz: float = 440.0) -> Path:
    """A mono sine tone; the codec follows the extension (``.wav``, ``.mp3``, ``.m4a``)."""
    codec = {".wav": "pcm_s16le", ".mp3": "libmp3lame"}.get(path.suffix, "aac")
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(codec, rate=SAMPLE_RATE)
        stream.layout = "mono"
        _write_tone(container, stream, seconds, tone_hz)
    return path


def write_jpeg(path: Path, colour: tuple[int, int, int] = (10, 120, 200)) -> Path:
    """A small JPEG of one colour."""
    Image.new("RGB", (32, 24), colour).save(path, format="JPEG")
    return path


def _write_tone(
    container: av.container.OutputContainer,
    stream: av.audio.stream.AudioStream,
    seconds: float,
    tone_hz: float,
) -> None:
    total = round(seconds * SAMPLE_RATE)
    block = 1024
    for offset in range(0, total, block):
        t = np.arange(offset, min(offset + block, total)) / SAMPLE_RATE
        samples = (0.3 * np.sin(2 * np.pi * tone_hz * t)).astype(np.float32)
        frame = av.AudioFrame.from_ndarray(samples[np.newaxis, :], format="flt", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = offset
        frame.time_base = Fraction(1, SAMPLE_RATE)
        container.mux(stream.encode(frame))
    container.mux(stream.encode(None))
