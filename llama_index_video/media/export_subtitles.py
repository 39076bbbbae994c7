"""Subtitles inside an exported file: a soft track players can switch on, or text burned
into the frames. PyAV and Pillow only.

Soft track: MP4, MOV and M4V get a ``mov_text`` (3GPP timed text) stream, Matroska a
``subrip`` one. PyAV's subtitle encoders take C subtitle structs that Python cannot
build, so the samples are written here: a ``mov_text`` sample is the text's UTF-8 length
as two bytes big-endian, then the text; a SubRip packet in Matroska is the text itself.
The encoder is still opened, with a minimal ASS header, because opening it writes the
track's sample description (default style and font table) that players such as
QuickTime read; a stream added without an encoder gets none. Other containers (MP3,
M4A, WebM with H.264...) and audio-only files get no track: the caller's sidecar
``.srt`` is then the only subtitles.

Burned in: :class:`Burner` draws the cue shown at a frame's time in a band at the bottom
of the frame, white text on a translucent dark box, in DejaVu Sans or Arial where the
system has one (:data:`FONTS`): Pillow's built-in font draws only ASCII, every accented
letter as a box. It blends into the decoded YUV
planes, inside the box only: no round trip through RGB, so every other pixel stays
exactly as decoded, and a frame costs a small fraction of converting it whole. A cue
too long for :data:`MAX_LINES` lines is shown page by page, each page for a share of
the cue's time proportional to its length.
"""

from __future__ import annotations

import bisect
import functools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from fractions import Fraction
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFont

TRACK_CODECS = {"mp4": "mov_text", "mov": "mov_text", "ipod": "mov_text", "matroska": "subrip"}
"""Output format (PyAV's name) -> the text subtitle codec written into it."""

logger = logging.getLogger(__name__)

MAX_LINES = 3
FONTS = ("DejaVuSans.ttf", "Arial.ttf", "arial.ttf", "Arial Unicode.ttf")
"""Fonts tried for burned subtitles, by file name in the system's font folders."""
TIME_BASE = Fraction(1, 1000)

_ASS_HEADER = b"""[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, \
BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, \
BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Sans,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
"""


@dataclass(frozen=True)
class Cue:
    """A subtitle: ``text`` shown from ``start`` to ``end`` seconds (lines split by ``\\n``)."""

    start: float
    end: float
    text: str


def shift_cues(cues: Iterable[Cue], by: float, *, length: float) -> list[Cue]:
    """The cues moved ``by`` seconds earlier and cut to ``[0, length]``; empty ones dropped."""
    moved = (Cue(max(0.0, c.start - by), min(length, c.end - by), c.text) for c in cues)
    return sorted((c for c in moved if c.end > c.start and c.text.strip()), key=_start)


def srt_text(cues: Iterable[Cue]) -> str:
    """``cues`` as a SubRip file, numbered from 1 in the order given."""
    import srt

    return srt.compose(
        [
            srt.Subtitle(number, timedelta(seconds=cue.start), timedelta(seconds=cue.end), cue.text)
            for number, cue in enumerate(cues, 1)
        ],
        reindex=False,
    )


def add_track(out: Any) -> Any | None:
    """Add a text subtitle stream to ``out`` (before anything is muxed), or None when
    its format holds none this module writes."""
    codec = TRACK_CODECS.get(out.format.name)
    if codec is None:
        return None
    stream = out.add_stream(codec)
    stream.codec_context.subtitle_header = _ASS_HEADER
    stream.time_base = TIME_BASE
    return stream


def write_track(out: Any, stream: Any, cues: Sequence[Cue]) -> None:
    """Mux one packet per cue into ``stream`` (from :func:`add_track`)."""
    mov_text = stream.codec_context.name == "mov_text"
    for cue in sorted(cues, key=_start):
        data = cue.text.encode("utf-8")
        if mov_text:
            data = len(data[:0xFFFF]).to_bytes(2, "big") + data[:0xFFFF]
        packet = av.Packet(data)
        packet.stream = stream
        packet.time_base = TIME_BASE
        packet.pts = packet.dts = round(cue.start / TIME_BASE)
        packet.duration = max(1, round((cue.end - cue.start) / TIME_BASE))
        out.mux(packet)


class Burner:
    """Draws the cue shown at a time onto frames of ``width`` x ``height``.

    Args:
        cues: On the output's timeline.
        width: Frame width in pixels.
        height: Frame height in pixels; the text is ``height / 16`` pixels high.
    """

    def __init__(self, cues: Sequence[Cue], width: int, height: int) -> None:
        self.width, self.height = width, height
        self.font = subtitle_font(max(12, height // 16))
        self.pages = [page for cue in sorted(cues, key=_start) for page in self._paginate(cue)]
        self._starts = [page.start for page in self.pages]
        self._drawn: dict[int, _Band] = {}

    def __call__(self, frame: av.VideoFrame, at: float) -> av.VideoFrame:
        """``frame`` (``width`` x ``height``) with the cue shown at ``at`` seconds drawn on
        it, as a new ``yuv420p`` frame; ``frame`` itself when no cue is shown then."""
        i = bisect.bisect_right(self._starts, at) - 1
        if i < 0 or at >= self.pages[i].end:
            return frame
        if i not in self._drawn:
            self._drawn[i] = self._draw(self.pages[i].text)
        planes = frame.to_ndarray(format="yuv420p")  # Y, then U and V, each packed
        self._drawn[i].blend(planes.reshape(-1), self.width, self.height)
        return av.VideoFrame.from_ndarray(planes, format="yuv420p")

    def _lines(self, text: str) -> list[str]:
        limit = self.width * 0.9
        lines: list[str] = []
        for paragraph in text.splitlines():
            line = ""
            for word in paragraph.split():  # greedy wrap at the frame's width
                wider = f"{line} {word}".strip()
                if line and self.font.getlength(wider) > limit:
                    lines.append(line)
                    line = word
                else:
                    line = wider
            if line:
                lines.append(line)
        return lines

    def _paginate(self, cue: Cue) -> list[Cue]:
        lines = self._lines(cue.text)
        pages = ["\n".join(lines[i : i + MAX_LINES]) for i in range(0, len(lines), MAX_LINES)]
        total = sum(len(page) for page in pages) or 1
        out: list[Cue] = []
        at = cue.start
        for page in pages:
            until = at + (cue.end - cue.start) * len(page) / total
            out.append(Cue(at, until, page))
            at = until
        return out

    def _draw(self, text: str) -> _Band:
        pad = max(4, self.height // 60)
        probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
        left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=self.font)
        width = min(self.width, round(right - left) + 2 * pad) // 2 * 2  # even: 4:2:0 chroma
        height = (round(bottom - top) + 2 * pad + 1) // 2 * 2
        overlay = Image.new("RGBA", (width, height), (0, 0, 0, 200))
        ImageDraw.Draw(overlay).multiline_text(
            (pad - left, pad - top), text, font=self.font, fill=(255, 255, 255, 255), align="center"
        )
        x = (self.width - width) // 4 * 2
        y = max(0, (self.height - height - self.height // 20) // 2 * 2)
        return _Band.of(overlay, x, y)


@dataclass(frozen=True)
class _Band:
    """A drawn cue ready to blend into 4:2:0 planes at (``x``, ``y``), both even."""

    x: int
    y: int
    luma: np.ndarray  # limited range (16-235), as H.264 video carries it
    alpha: np.ndarray  # 0-1, full resolution
    chroma_alpha: np.ndarray  # 0-1, averaged over each 2x2 block

    @classmethod
    def of(cls, overlay: Image.Image, x: int, y: int) -> _Band:
        grey = np.asarray(overlay.getchannel("R"), dtype=np.float32)
        alpha = np.asarray(overlay.getchannel("A"), dtype=np.float32) / 255
        h, w = alpha.shape
        chroma_alpha = alpha.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
        return cls(x, y, 16 + grey * 219 / 255, alpha, chroma_alpha)

    def blend(self, flat: np.ndarray, width: int, height: int) -> None:
        """Blend into ``flat``, a frame's packed Y, U and V planes, in place."""
        size = width * height
        neutral = np.full(self.chroma_alpha.shape, 128.0, dtype=np.float32)
        chroma = (height // 2, width // 2)
        planes = (
            (flat[:size].reshape(height, width), 1, self.luma, self.alpha),
            (flat[size : size * 5 // 4].reshape(chroma), 2, neutral, self.chroma_alpha),
            (flat[size * 5 // 4 :].reshape(chroma), 2, neutral, self.chroma_alpha),
        )
        for plane, step, value, alpha in planes:
            h, w = alpha.shape
            region = plane[self.y // step : self.y // step + h, self.x // step : self.x // step + w]
            a, v = (
                alpha[: region.shape[0], : region.shape[1]],
                value[: region.shape[0], : region.shape[1]],
            )
            region[...] = np.rint(region * (1 - a) + v * a).astype(np.uint8)


@functools.cache
def subtitle_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The first of :data:`FONTS` installed, else Pillow's built-in font (ASCII only)."""
    for name in FONTS:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    logger.warning(
        "none of %s found: burned subtitles use Pillow's built-in font, which draws only "
        "ASCII letters (install fonts-dejavu-core)",
        ", ".join(FONTS),
    )
    return ImageFont.load_default(size=size)


def _start(cue: Cue) -> float:
    return cue.start
