"""Fixtures for the transcription tests: the committed speech clips and their scripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.transcription import faster, openai_whisper

SPEECH = Path(__file__).resolve().parent.parent / "fixtures" / "speech"


@dataclass(frozen=True)
class Clip:
    """A fixture clip decoded to 16 kHz mono, with the sentences it was built from."""

    path: Path
    audio: np.ndarray
    duration: float
    sentences: list[dict]


def _clip(name: str, suffix: str = ".ogg") -> Clip:
    from faster_whisper.audio import decode_audio

    path = SPEECH / f"{name}{suffix}"
    manifest = json.loads((SPEECH / f"{name}.json").read_text())
    audio = decode_audio(str(path), sampling_rate=16_000)
    return Clip(path, audio, manifest["duration"], manifest["sentences"])


@pytest.fixture(scope="session")
def narration() -> Clip:
    """60 s of English narration, ten sentences at known times."""
    return _clip("narration_en")


@pytest.fixture(scope="session")
def librivox() -> Clip:
    """25 s of human speech we did not make: a LibriVox reading of Sense and Sensibility."""
    return _clip("librivox_en", ".flac")


@pytest.fixture(scope="session")
def german() -> Clip:
    """Nine seconds of German speech."""
    return _clip("german_de")


@pytest.fixture
def fresh_model_caches() -> Iterator[None]:
    """Start and end a test with no loaded models, for tests that count them."""
    faster.clear_model_cache()
    openai_whisper.clear_model_cache()
    yield
    faster.clear_model_cache()
    openai_whisper.clear_model_cache()
