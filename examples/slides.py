"""The example videos' slides, drawn with Pillow: fonts found on this machine, one
renderer per kind of slide (title, text, bullets, table, charts, diagrams), each slide
one RGB image of the video's size. ``examples/make_media.py`` scripts the slides and
encodes the frames.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 640, 360
INK, PAPER, ACCENT, MUTED = (15, 15, 15), (255, 255, 255), (20, 60, 150), (90, 90, 90)
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts")
FONT_FILES = {
    "regular": ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "FreeSans.ttf"),
    "bold": ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "FreeSansBold.ttf"),
}


@dataclass(frozen=True)
class Slide:
    """A slide as scripted. ``kind`` picks the renderer; ``lines`` is every other text drawn."""

    start: float
    end: float
    kind: str
    title: str
    lines: tuple[str, ...] = ()
    spoken: bool = True

    @property
    def visible_text(self) -> list[str]:
        return [self.title, *self.lines]


def find_font(style: str) -> Path:
    """Find a TrueType font installed on this machine (DejaVu Sans first)."""
    for name in FONT_FILES[style]:
        for folder in FONT_DIRS:
            found = sorted(folder.rglob(name)) if folder.is_dir() else []
            if found:
                return found[0]
    raise FileNotFoundError(f"no {style} font among {FONT_FILES[style]}; install fonts-dejavu-core")


class Fonts:
    """Loads each (style, size) once."""

    def __init__(self) -> None:
        self._paths = {style: find_font(style) for style in FONT_FILES}
        self._cache: dict[tuple[str, int], ImageFont.FreeTypeFont] = {}

    def get(self, size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
        style = "bold" if bold else "regular"
        if (style, size) not in self._cache:
            self._cache[style, size] = ImageFont.truetype(str(self._paths[style]), size)
        return self._cache[style, size]

    def fit(
        self, text: str, width: int, *, largest: int, bold: bool = False
    ) -> ImageFont.FreeTypeFont:
        """The largest font (down to 20 px) in which ``text`` fits in ``width`` pixels."""
        size = largest
        while size > 20 and self.get(size, bold=bold).getlength(text) > width:
            size -= 2
        return self.get(size, bold=bold)


def draw_heading(draw: ImageDraw.ImageDraw, fonts: Fonts, title: str) -> None:
    draw.text((40, 24), title, font=fonts.fit(title, WIDTH - 80, largest=36, bold=True), fill=INK)
    draw.rectangle((40, 76, 200, 81), fill=ACCENT)


def draw_arrow(draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int]) -> None:
    colour = (220, 80, 0)
    draw.line((start, end), fill=colour, width=5)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = [
        (end[0] - 18 * math.cos(angle + side), end[1] - 18 * math.sin(angle + side))
        for side in (0.45, -0.45)
    ]
    draw.polygon([end, *head], fill=colour)


def render_title(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    title_font = fonts.fit(slide.title, WIDTH - 60, largest=52, bold=True)
    y = 130 if slide.lines else 155
    draw.text((WIDTH // 2, y), slide.title, font=title_font, fill=INK, anchor="mm")
    draw.rectangle((WIDTH // 2 - 80, y + 40, WIDTH // 2 + 80, y + 45), fill=ACCENT)
    for offset, line in enumerate(slide.lines):
        draw.text(
            (WIDTH // 2, y + 90 + 44 * offset), line, font=fonts.get(32), fill=MUTED, anchor="mm"
        )


def render_text(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    for offset, line in enumerate(slide.lines):
        font = fonts.fit(line, WIDTH - 60, largest=34)
        draw.text((30, 170 + 56 * offset), line, font=font, fill=INK)


def render_bullets(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    for offset, line in enumerate(slide.lines):
        y = 140 + 70 * offset
        draw.ellipse((48, y + 12, 62, y + 26), fill=ACCENT)  # a drawn bullet, not a character
        draw.text((84, y), line, font=fonts.fit(line, WIDTH - 120, largest=34), fill=INK)


def render_flash(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH, HEIGHT), fill=(255, 214, 0))
    font = fonts.fit(slide.title, WIDTH - 40, largest=60, bold=True)
    draw.text((WIDTH // 2, HEIGHT // 2), slide.title, font=font, fill=INK, anchor="mm")


def render_table(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    top, row_height = 110, 70
    for offset, row in enumerate(slide.lines):
        y = top + row_height * offset
        draw.rectangle((40, y, WIDTH - 40, y + row_height), outline=INK, width=2)
        draw.text((60, y + row_height // 2), row, font=fonts.get(34), fill=INK, anchor="lm")


def render_line_chart(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    """Temperature against altitude, with the y-axis label rotated 90° as in a paper figure."""
    draw = ImageDraw.Draw(image)
    y_label, x_label = slide.lines
    draw.text(
        (WIDTH // 2, 26),
        slide.title,
        font=fonts.fit(slide.title, WIDTH - 40, largest=32, bold=True),
        fill=INK,
        anchor="mm",
    )
    left, right, top, bottom = 110, 610, 60, 290
    draw.line(((left, top), (left, bottom), (right, bottom)), fill=INK, width=3)
    label_font = fonts.get(30, bold=True)
    box = label_font.getbbox(y_label)
    label = Image.new("L", (int(box[2]) + 8, int(box[3]) + 8), 0)
    ImageDraw.Draw(label).text((4, 4), y_label, font=label_font, fill=255)
    label = label.rotate(90, expand=True)  # reads bottom to top
    image.paste(INK, (22, (top + bottom - label.height) // 2), label)
    draw.text(((left + right) // 2, 325), x_label, font=label_font, fill=INK, anchor="mm")

    def point(temperature: float, altitude: float) -> tuple[float, float]:
        x = left + (temperature + 80) / 100 * (right - left)
        return x, bottom - altitude / 50 * (bottom - top)

    profile = [(15, 0), (-56, 11), (-56, 20), (-45, 32), (-15, 42), (-2, 50)]
    draw.line([point(t, a) for t, a in profile], fill=(200, 30, 30), width=5, joint="curve")


def render_sun_diagram(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    (cx, cy), radius = (580, 60), 45
    draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=(255, 200, 0))
    draw.rectangle((0, 200, WIDTH, 270), fill=(200, 225, 255), outline=ACCENT, width=3)
    draw.text((40, 235), slide.lines[0], font=fonts.get(32, bold=True), fill=INK, anchor="lm")
    for x in (505, 550, 595):  # rays from the sun into the ozone layer, clear of the label
        angle = math.atan2(228 - cy, x - cx)
        start = (cx + (radius + 6) * math.cos(angle), cy + (radius + 6) * math.sin(angle))
        draw_arrow(draw, (round(start[0]), round(start[1])), (x, 228))
    draw.rectangle((0, 330, WIDTH, HEIGHT), fill=(120, 170, 90))


def render_schema(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    boxes = {
        slide.lines[0]: (40, 190, 230, 260),
        slide.lines[1]: (380, 110, 600, 180),
        slide.lines[2]: (380, 260, 600, 330),
    }
    centres = {name: ((x0 + x1) // 2, (y0 + y1) // 2) for name, (x0, y0, x1, y1) in boxes.items()}
    orders, payments, customers = slide.lines
    for a, b in ((orders, payments), (orders, customers), (payments, customers)):
        draw.line((centres[a], centres[b]), fill=MUTED, width=4)
    for name, box in boxes.items():
        draw.rectangle(box, fill=(230, 240, 255), outline=ACCENT, width=4)
        draw.text(centres[name], name, font=fonts.get(32, bold=True), fill=INK, anchor="mm")


def render_bar_chart(image: Image.Image, slide: Slide, fonts: Fonts) -> None:
    draw = ImageDraw.Draw(image)
    draw_heading(draw, fonts, slide.title)
    red = (190, 20, 20)
    draw.text((70, 125), slide.lines[0], font=fonts.get(32, bold=True), fill=red, anchor="lm")
    left, bottom = 60, 330
    draw.line(((left, 165), (left, bottom), (WIDTH - 40, bottom)), fill=INK, width=3)
    heights = (24, 27, 30, 36, 42, 56, 88, 150)  # a long tail: the last bar is p99
    for index, height in enumerate(heights):
        x = left + 20 + index * 64
        colour = red if index == len(heights) - 1 else ACCENT
        draw.rectangle((x, bottom - height, x + 40, bottom - 2), fill=colour)


RENDERERS: dict[str, Callable[[Image.Image, Slide, Fonts], None]] = {
    "title": render_title,
    "text": render_text,
    "bullets": render_bullets,
    "flash": render_flash,
    "table": render_table,
    "line_chart": render_line_chart,
    "sun_diagram": render_sun_diagram,
    "schema": render_schema,
    "bar_chart": render_bar_chart,
}


def render(slide: Slide, fonts: Fonts) -> np.ndarray:
    image = Image.new("RGB", (WIDTH, HEIGHT), PAPER)
    RENDERERS[slide.kind](image, slide, fonts)
    return np.asarray(image)
