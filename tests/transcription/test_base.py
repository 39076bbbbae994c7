"""The transcription contract: public names, the protocol, and the audio check."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import llama_index_video.transcription as transcription
from llama_index_video.transcription import (
    FasterWhisperTranscriber,
    OpenAIWhisperTranscriber,
    Transcriber,
)
from llama_index_video.transcription.base import as_mono_float32


def test_public_names_are_pinned() -> None:
    assert sorted(transcription.__all__) == [
        "Cue",
        "DEFAULT_MODEL",
        "FasterWhisperTranscriber",
        "OpenAIWhisperTranscriber",
        "ResolvedModel",
        "SAMPLE_RATE",
        "Segment",
        "Speech",
        "SubtitleSource",
        "Transcriber",
        "Transcription",
        "TranscriptionInfo",
        "Word",
        "find_subtitles",
        "load_subtitles",
        "merge_rolling_cues",
        "model_cache_dir",
        "offline_model_path",
        "resolve_model",
    ]
    for name in transcription.__all__:
        assert getattr(transcription, name) is not None


@pytest.mark.parametrize("backend", [FasterWhisperTranscriber, OpenAIWhisperTranscriber])
def test_backends_keep_the_protocol_signature(backend: type) -> None:
    expected = inspect.signature(Transcriber.transcribe)
    assert inspect.signature(backend.transcribe) == expected
    assert isinstance(backend.name, str)


def test_audio_check() -> None:
    samples = np.zeros(10, dtype=np.float64)
    converted = as_mono_float32(samples)
    assert converted.dtype == np.float32 and converted.shape == (10,)
    float32 = np.zeros(10, dtype=np.float32)
    assert as_mono_float32(float32) is float32
    with pytest.raises(ValueError, match="mono"):
        as_mono_float32(np.zeros((10, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="float"):
        as_mono_float32(np.zeros(10, dtype=np.int16))
