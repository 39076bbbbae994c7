"""ReaderOptions: the reader settings an index builds its VideoReader from."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.ocr import OCR_CHOICES, OcrChoice, OcrOptions, ocr_engine
from llama_index_video.reader.clips import ClipOptions
from llama_index_video.reader.options import ReaderOptions
from llama_index_video.reader.units import UnitOptions
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.speakers.base import Diarizer
from llama_index_video.transcription.faster import FasterWhisperTranscriber

# What the index decides for itself, and what only matters to lazy_load_data.
NOT_OPTIONS = {"media_dir", "raise_on_error"}


def test_options_and_reader_keywords_are_the_same_settings():
    fields = {f.name: f for f in dataclasses.fields(ReaderOptions)}
    parameters = inspect.signature(VideoReader).parameters
    assert set(fields) == set(parameters) - NOT_OPTIONS
    for name, field in fields.items():
        default = field.default_factory() if callable(field.default_factory) else field.default
        if name != "clips":  # None: the default windows (the index decides whether to cut)
            assert default == parameters[name].default, name


class _Diarizer:
    name = "fake"

    def diarize(self, chunks, *, source):  # pragma: no cover - never called
        raise NotImplementedError


def test_the_reader_gets_every_option(tmp_path):
    options = ReaderOptions(
        transcriber=FasterWhisperTranscriber(model="base", language="de"),
        use_subtitles=False,
        frames=FrameSamplingOptions(interval=2.0),
        ocr="off",
        ocr_options=OcrOptions(min_confidence=0.8),
        clips=ClipOptions(video_seconds=60),
        units=UnitOptions(target_chars=200),
        diarizer=_Diarizer(),
        text_chunk_size=256,
        text_chunk_overlap=32,
        max_duration=3600,
        audio_chunk_seconds=120,
        audio_lead_in_seconds=30,
    )
    assert isinstance(options.diarizer, Diarizer)
    reader = VideoReader.from_options(options, media_dir=tmp_path / "media", clips=True)
    assert reader.media_dir == tmp_path / "media"
    assert reader.transcriber == options.transcriber
    assert reader.ocr is None
    for name in ("use_subtitles", "frames", "ocr_options", "clips", "units", "diarizer"):
        assert getattr(reader, name) == getattr(options, name), name
    for name in (
        "text_chunk_size",
        "text_chunk_overlap",
        "max_duration",
        "audio_chunk_seconds",
        "audio_lead_in_seconds",
    ):
        assert getattr(reader, name) == getattr(options, name), name


def test_clips_are_cut_only_when_asked_with_default_windows(tmp_path):
    options = ReaderOptions(ocr="off")
    assert VideoReader.from_options(options, media_dir=tmp_path).clips is None
    assert VideoReader.from_options(options, media_dir=tmp_path, clips=True).clips == ClipOptions()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_duration": 0}, ValueError, "max_duration"),
        ({"audio_chunk_seconds": 10}, ValueError, "audio_chunk_seconds"),
        ({"audio_lead_in_seconds": -1}, ValueError, "audio_lead_in_seconds"),
        ({"audio_lead_in_seconds": 601}, ValueError, "audio_lead_in_seconds"),
        ({"text_chunk_size": 64, "text_chunk_overlap": 64}, ValueError, "text_chunk_overlap"),
        ({"ocr": "easyocr"}, ValueError, "auto, rapidocr, tesseract, off"),
        ({"ocr": True}, TypeError, "OcrEngine or one of"),
        ({"ocr": None}, TypeError, "OcrEngine or one of"),
    ],
)
def test_bad_options_fail_on_construction(options, error, message):
    with pytest.raises(error, match=message):
        ReaderOptions(**options)


def test_options_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ReaderOptions().ocr = "off"  # type: ignore[misc]


def test_every_named_choice_resolves():
    assert typing.get_args(OcrChoice) == OCR_CHOICES
    assert ocr_engine("off") is None
    for choice in ("auto", "rapidocr"):
        assert ocr_engine(choice) is not None  # RapidOCR is installed for the tests
