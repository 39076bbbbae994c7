"""Noise filtering, normalisation, reading order and on-screen spans, engine-independent."""

from __future__ import annotations

from pathlib import Path

import pytest

from llama_index_video.media.frames import Frame
from llama_index_video.ocr import (
    OcrOptions,
    ScreenText,
    TextBox,
    arrange,
    normalise_text,
    screen_text_spans,
)
from llama_index_video.ocr.screen import VERTICAL_PREFIX

OPTIONS = OcrOptions()


def box(text, left, top, width=100.0, height=30.0, confidence=0.95):
    return TextBox(text, confidence, left, top, width, height)


def test_boxes_on_one_line_are_joined_left_to_right_and_lines_go_top_down():
    screen = arrange(
        [
            box("ms", 450, 112, 40, 30),
            box("Latency", 40, 30, 160, 32),
            box("p99 latency: 340", 70, 110, 360, 34),
        ],
        OPTIONS,
    )
    assert screen.lines == ("Latency", "p99 latency: 340 ms")
    assert screen.text == "Latency\np99 latency: 340 ms"
    assert screen.inline == "Latency; p99 latency: 340 ms"


def test_a_wide_gap_separates_columns_and_vertical_text_is_its_own_line():
    screen = arrange(
        [
            box("Temperature in the atmosphere", 34, 11, 570, 33),
            box("ALTITUDE（km)", 28, 56, 31, 242),
            box("left column", 80, 150, 150, 30),
            box("right column", 450, 152, 160, 30),
        ],
        OPTIONS,
    )
    assert screen.lines == (
        "Temperature in the atmosphere",
        VERTICAL_PREFIX + "ALTITUDE(km)",
        "left column",
        "right column",
    )


def test_noise_is_dropped():
    screen = arrange(
        [
            box("Signed by 197 countries", 32, 175, 412, 35),
            box("blurry", 32, 300, confidence=0.3),
            box("tiny print", 32, 330, 40, 5),
            box("•", 500, 10, 10, 10),
            box("x", 10, 250, 12, 30),
            box("   ", 300, 250),
        ],
        OPTIONS,
    )
    assert screen.lines == ("Signed by 197 countries",)
    assert [b.text for b in screen.boxes] == ["Signed by 197 countries"]


def test_text_is_nfkc_normalised_with_single_spaces():
    assert normalise_text("ALTITUDE （km)\u3000 ﬁ  x ") == "ALTITUDE (km) fi x"


def test_options_are_validated():
    with pytest.raises(ValueError, match="min_confidence"):
        OcrOptions(min_confidence=1.5)
    with pytest.raises(ValueError, match="same_text_ratio"):
        OcrOptions(same_text_ratio=0)


def _frame(start, end):
    return Frame(start, end, Path(f"/frames/{start}.jpg"), 640, 360, "interval")


def _screen(*lines):
    return ScreenText(tuple(lines))


def test_consecutive_frames_with_the_same_text_make_one_span():
    reads = [
        (_frame(0, 5), _screen("Montreal Protocol (1987)", "Signed by 197 countries")),
        (_frame(5, 10), _screen("Montreal Protocol (1987)", "Signedby197 countries")),
        (_frame(10, 15), _screen("Montreal Protoco1 (1987)", "Signed by 197 countries")),
        (_frame(15, 16.5), _screen("1 DOBSON UNIT = 0.01 mm")),
        (_frame(16.5, 20), _screen()),
        (_frame(20, 25), _screen("1 DOBSON UNIT = 0.01 mm")),
    ]
    spans = list(screen_text_spans(reads))
    assert [(s.start, s.end) for s in spans] == [(0, 15), (15, 16.5), (20, 25)]
    assert spans[0].lines == ("Montreal Protocol (1987)", "Signed by 197 countries")
    assert spans[0].frame_time == 0 and spans[0].frame_path == Path("/frames/0.jpg")
    assert spans[1].text == "1 DOBSON UNIT = 0.01 mm"


def test_no_text_gives_no_spans():
    assert list(screen_text_spans([(_frame(0, 5), _screen()), (_frame(5, 9), _screen())])) == []


def test_the_ocr_package_exports_its_public_names():
    from llama_index_video import ocr

    assert sorted(ocr.__all__) == [
        "OCR_CHOICES",
        "OcrChoice",
        "OcrEngine",
        "OcrOptions",
        "RapidOcrEngine",
        "ScreenText",
        "ScreenTextSpan",
        "TesseractEngine",
        "TextBox",
        "arrange",
        "check_ocr_choice",
        "default_ocr_engine",
        "normalise_text",
        "ocr_engine",
        "read_screen_text",
        "screen_text_spans",
    ]
    assert all(getattr(ocr, name) is not None for name in ocr.__all__)
