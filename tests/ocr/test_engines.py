"""The OCR backends on the example videos' frames and on frames with nothing to read."""

from __future__ import annotations

import shutil
import sys
import unicodedata

import numpy as np
import pytest
from PIL import Image

from llama_index_video.errors import MediaError, MissingDependencyError
from llama_index_video.media.frames import sample_frames
from llama_index_video.ocr import (
    OcrEngine,
    RapidOcrEngine,
    TesseractEngine,
    read_screen_text,
)
from tests_support import CHECKOUT, OZONE

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="the tesseract program is not installed"
)


def squeeze(text: str) -> str:
    """Compare OCR text ignoring case, spaces and full-width forms."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


@pytest.fixture(scope="module")
def slide_frames(tmp_path_factory, timeline):
    """The frame on screen in the middle of each slide, by (file name, slide title)."""
    out = tmp_path_factory.mktemp("frames")
    found = {}
    for video in (OZONE, CHECKOUT):
        frames = list(sample_frames(video, out_dir=out, name_prefix=video.stem))
        for slide in timeline[video.name]["slides"]:
            middle = (slide["start"] + slide["end"]) / 2
            found[video.name, slide["title"]] = next(f for f in frames if f.time <= middle < f.end)
    return found


@pytest.fixture(scope="module")
def rapid():
    return RapidOcrEngine(threads=2)


def test_rapidocr_reads_every_on_screen_only_slide(rapid, slide_frames, timeline):
    for name in ("ozone_explainer.mp4", "checkout_deep_dive.mp4"):
        for slide in timeline[name]["slides"]:
            if slide["spoken"]:
                continue
            screen = read_screen_text(rapid, slide_frames[name, slide["title"]].path)
            for text in slide["visible_text"]:
                assert squeeze(text) in squeeze(screen.text), (slide["title"], screen.lines)


def test_rapidocr_keeps_the_spaces_between_words(rapid, slide_frames):
    montreal = read_screen_text(
        rapid, slide_frames["ozone_explainer.mp4", "Montreal Protocol (1987)"].path
    )
    assert "Signed by 197 countries" in montreal.lines
    latency = read_screen_text(rapid, slide_frames["checkout_deep_dive.mp4", "Latency"].path)
    assert "p99 latency: 340 ms" in latency.lines


def test_rapidocr_reads_the_vertical_axis_label_as_vertical_text(rapid, slide_frames):
    frame = slide_frames["ozone_explainer.mp4", "Temperature in the atmosphere"]
    screen = read_screen_text(rapid, frame.path)
    vertical = [b for b in screen.boxes if b.vertical]
    assert [squeeze(b.text) for b in vertical] == [squeeze("ALTITUDE (km)")]
    assert "Vertical text: ALTITUDE (km)" in screen.lines
    assert all(0 <= b.left < b.right <= frame.width for b in screen.boxes)
    assert all(0.6 <= b.confidence <= 1 for b in screen.boxes)


@pytest.fixture(scope="module")
def nothing_to_read(tmp_path_factory):
    """A black, a white, a flat grey and two noise images."""
    folder = tmp_path_factory.mktemp("blank")
    rng = np.random.default_rng(7)
    images = {
        "black.jpg": Image.new("RGB", (640, 360)),
        "white.jpg": Image.new("RGB", (640, 360), (255, 255, 255)),
        "grey.png": Image.new("RGB", (640, 360), (90, 90, 90)),
        "noise.jpg": Image.fromarray(rng.integers(0, 256, (360, 640, 3), dtype=np.uint8)),
        "speckle.png": Image.fromarray(
            (rng.integers(0, 2, (360, 640)) * 255).astype(np.uint8), mode="L"
        ),
    }
    for name, image in images.items():
        image.save(folder / name)
    return sorted(folder.iterdir())


@pytest.mark.parametrize(
    "engine",
    [pytest.param("rapidocr"), pytest.param("tesseract", marks=needs_tesseract)],
)
def test_black_blank_and_noise_frames_give_nothing(engine, nothing_to_read, rapid):
    backend: OcrEngine = rapid if engine == "rapidocr" else TesseractEngine()
    for image in nothing_to_read:
        assert read_screen_text(backend, image).lines == (), image.name


@needs_tesseract
def test_tesseract_reads_the_flash_slide(slide_frames):
    engine = TesseractEngine(threads=1)
    assert engine.name == "tesseract" and isinstance(engine, OcrEngine)
    screen = read_screen_text(
        engine, slide_frames["ozone_explainer.mp4", "1 DOBSON UNIT = 0.01 mm"].path
    )
    assert screen.lines == ("1 DOBSON UNIT = 0.01 mm",)


def test_a_missing_rapidocr_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(MissingDependencyError) as info:
        RapidOcrEngine()
    assert info.value.extra == "ocr"
    assert "pip install 'llama-index-video[ocr]'" in str(info.value)


def test_a_missing_tesseract_says_how_to_install_it(tmp_path):
    with pytest.raises(MissingDependencyError) as info:
        TesseractEngine(executable=str(tmp_path / "tesseract"))
    assert "apt-get install tesseract-ocr" in str(info.value)
    assert "llama-index-video[ocr]" in str(info.value)


@needs_tesseract
def test_a_tesseract_failure_names_the_frame(tmp_path):
    frame = tmp_path / "frame_000012.png"
    frame.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    with pytest.raises(MediaError, match="tesseract failed") as info:
        TesseractEngine().detect(frame)
    assert info.value.path == frame


@needs_tesseract
def test_a_language_without_its_data_is_refused_once_naming_the_package():
    with pytest.raises(MissingDependencyError) as info:
        TesseractEngine(languages="eng+no_such_language")
    message = str(info.value)
    assert "\n" not in message
    assert "apt-get install tesseract-ocr-no-such-language" in message
    assert "'no_such_language'" in message and "eng" in message


@pytest.mark.parametrize(
    ("option", "value"), [("threads", 0), ("space_threshold", 1.0), ("detection_side", 16)]
)
def test_rapidocr_refuses_impossible_settings(option, value):
    with pytest.raises(ValueError, match=option):
        RapidOcrEngine(**{option: value})
