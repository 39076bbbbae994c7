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
of the frame, white text on a translucent dark box, and leaves every other pixel as
decoded. A cue too long for :data:`MAX_LINES` lines is shown page by page, each page
for a share of the cue's time proportional to its length.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import av
from PIL import Image, ImageDraw, ImageFont

TRACK_CODECS = {"mp4": "mov_text", "mov": "mov_text", "ipod": "mov_text", "matroska": "subrip"}
"""Output format (PyAV's name) -> the text subtitle codec written into it."""

MAX_LINES = 3
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
        self.font = ImageFont.load_default(size=max(12, height // 16))
        self.pages = [page for cue in sorted(cues, key=_start) for page in self._paginate(cue)]
        self._starts = [page.start for page in self.pages]
        self._drawn: dict[int, tuple[Image.Image, tuple[int, int]]] = {}

    def __call__(self, frame: av.VideoFrame, at: float) -> av.VideoFrame:
        """``frame`` with the cue shown at ``at`` seconds drawn on it (itself if none)."""
        i = bisect.bisect_right(self._starts, at) - 1
        if i < 0 or at >= self.pages[i].end:
            return frame
        if i not in self._drawn:
            self._drawn[i] = self._draw(self.pages[i].text)
        overlay, where = self._drawn[i]
        image = frame.to_image()
        image.paste(overlay, where, overlay)
        return av.VideoFrame.from_image(image).reformat(format="yuv420p")

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

    def _draw(self, text: str) -> tuple[Image.Image, tuple[int, int]]:
        pad = max(4, self.height // 60)
        probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
        left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=self.font)
        box = (round(right - left) + 2 * pad, round(bottom - top) + 2 * pad)
        overlay = Image.new("RGBA", box, (0, 0, 0, 200))
        ImageDraw.Draw(overlay).multiline_text(
            (pad - left, pad - top), text, font=self.font, fill=(255, 255, 255, 255), align="center"
        )
        where = ((self.width - box[0]) // 2, self.height - box[1] - self.height // 20)
        return overlay, where


def _start(cue: Cue) -> float:
    return cue.start
