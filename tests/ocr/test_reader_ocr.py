"""VideoReader with OCR: on-screen text as timed ``ocr`` nodes and in the frame nodes."""

from __future__ import annotations

import itertools
import logging
import shutil
import sys
import unicodedata
from pathlib import Path

import pytest
from llama_index.core.schema import MetadataMode

from llama_index_video import schema
from llama_index_video.errors import MissingDependencyError
from llama_index_video.ocr import RapidOcrEngine, TesseractEngine
from llama_index_video.reader.video_reader import VideoReader
from tests_support import OZONE, SUBTITLES

TIMED_KEYS = {
    schema.SOURCE,
    schema.FILE_NAME,
    schema.CONTENT_HASH,
    schema.MODALITY,
    schema.START_S,
    schema.END_S,
    schema.LABEL,
    schema.TIME_LABEL,
    schema.MEDIA_URL,
}


def squeeze(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def of(nodes, modality):
    return [n for n in nodes if n.metadata[schema.MODALITY] == modality]


@pytest.fixture(scope="module")
def ozone_nodes(tmp_path_factory):
    """The ozone video read with its subtitles (no speech recognition) and RapidOCR."""
    folder = tmp_path_factory.mktemp("talk")
    video = folder / "ozone_explainer.mp4"
    shutil.copy(OZONE, video)
    shutil.copy(SUBTITLES / "ozone_explainer.srt", folder / "ozone_explainer.srt")
    reader = VideoReader(media_dir=folder / "media", ocr=RapidOcrEngine(threads=2))
    return reader.load_data(video)


def test_the_flash_slide_is_an_ocr_node_spanning_its_screen_time(ozone_nodes, timeline):
    flash = next(s for s in timeline["ozone_explainer.mp4"]["slides"] if s["end"] - s["start"] < 2)
    node = next(n for n in of(ozone_nodes, "ocr") if "DOBSON" in n.text)
    assert node.text == "1 DOBSON UNIT = 0.01 mm"
    assert node.metadata[schema.START_S] == pytest.approx(flash["start"], abs=0.1)
    assert node.metadata[schema.END_S] == pytest.approx(flash["end"], abs=0.2)


def test_every_on_screen_only_fact_is_in_an_ocr_node_at_its_time(ozone_nodes, timeline):
    for slide in timeline["ozone_explainer.mp4"]["slides"]:
        overlapping = [
            n
            for n in of(ozone_nodes, "ocr")
            if n.metadata[schema.START_S] < slide["end"]
            and n.metadata[schema.END_S] > slide["start"]
        ]
        text = squeeze(" ".join(n.text for n in overlapping))
        for visible in slide["visible_text"]:
            assert squeeze(visible) in text, (slide["title"], visible)


def test_ocr_spans_follow_each_other_without_overlap(ozone_nodes):
    spans = [(n.metadata[schema.START_S], n.metadata[schema.END_S]) for n in of(ozone_nodes, "ocr")]
    assert spans == sorted(spans)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans))
    assert all(start < end for start, end in spans)


def test_ocr_metadata_is_flat_citable_and_names_its_frame(ozone_nodes):
    node = next(n for n in of(ozone_nodes, "ocr") if "Montreal" in n.text)
    meta = node.metadata
    assert TIMED_KEYS | {schema.FRAME_TIME, schema.IMAGE_PATH} <= set(meta)
    assert all(isinstance(v, (str, int, float)) for v in meta.values())
    assert meta[schema.LABEL] == "[ozone_explainer.mp4 01:04-01:20]"
    assert meta[schema.MEDIA_URL].endswith(f"#t={meta[schema.START_S]:.1f}")
    assert Path(meta[schema.IMAGE_PATH]).is_file()
    assert meta[schema.START_S] <= meta[schema.FRAME_TIME] < meta[schema.END_S]
    assert node.get_content(MetadataMode.EMBED) == node.text
    ids = [n.node_id for n in ozone_nodes]
    assert len(ids) == len(set(ids))


def test_frame_nodes_say_what_is_on_screen(ozone_nodes):
    frame = next(f for f in of(ozone_nodes, "frame") if f.metadata[schema.FRAME_TIME] >= 64)
    assert frame.text.startswith("On screen: Montreal Protocol (1987); Signed by 197 countries")


@pytest.fixture
def blank_video(tmp_path, make_video):
    scenes = [(2.0, (0, 0, 0)), (2.0, (255, 255, 255)), (2.0, (40, 80, 200))]
    return make_video(tmp_path / "blank.mp4", scenes, tone=False)


def test_black_and_blank_frames_give_no_ocr_nodes_and_no_error(tmp_path, blank_video):
    reader = VideoReader(media_dir=tmp_path / "media", ocr=RapidOcrEngine())
    nodes = reader.load_data(blank_video)
    assert len(of(nodes, "frame")) == 3
    assert of(nodes, "ocr") == []
    assert all(not n.text.startswith("On screen") for n in nodes)


def test_without_rapidocr_reading_goes_on_without_ocr(tmp_path, blank_video, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with caplog.at_level(logging.INFO, logger="llama_index_video.ocr"):
        reader = VideoReader(media_dir=tmp_path / "media")
    assert reader.ocr is None
    assert "pip install 'llama-index-video[ocr]'" in caplog.text
    assert len(of(reader.load_data(blank_video), "frame")) == 3
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[ocr\]"):
        VideoReader(media_dir=tmp_path / "media", ocr="rapidocr")


@pytest.mark.parametrize(
    ("choice", "engine"),
    [("off", type(None)), ("rapidocr", RapidOcrEngine), ("auto", RapidOcrEngine)],
)
def test_each_named_choice_gives_its_engine(tmp_path, choice, engine):
    assert isinstance(VideoReader(media_dir=tmp_path, ocr=choice).ocr, engine)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract program")
def test_tesseract_is_chosen_by_name(tmp_path):
    assert isinstance(VideoReader(media_dir=tmp_path, ocr="tesseract").ocr, TesseractEngine)


def test_an_engine_of_your_own_is_used_as_given(tmp_path):
    engine = RapidOcrEngine(threads=1)
    assert VideoReader(media_dir=tmp_path, ocr=engine).ocr is engine


def test_an_unknown_choice_is_refused(tmp_path):
    with pytest.raises(ValueError, match="auto, rapidocr, tesseract, off"):
        VideoReader(media_dir=tmp_path, ocr="easyocr")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="OcrEngine"):
        VideoReader(media_dir=tmp_path, ocr=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("old", "choice", "engine"),
    [
        (False, "off", type(None)),
        (True, "rapidocr", RapidOcrEngine),
        (None, "auto", RapidOcrEngine),
    ],
)
def test_the_old_bool_and_none_still_work_for_one_release_with_a_warning(
    tmp_path, old, choice, engine
):
    with pytest.warns(DeprecationWarning, match=f"pass ocr='{choice}'") as warned:
        reader = VideoReader(media_dir=tmp_path, ocr=old)  # type: ignore[arg-type]
    assert isinstance(reader.ocr, engine)
    assert warned[0].filename == __file__  # points at the caller
