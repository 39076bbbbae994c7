"""The zoo, written once per session, and a transcriber whose words do not depend on the CPU."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.transcription.base import (
    SAMPLE_RATE,
    Segment,
    Transcription,
    TranscriptionInfo,
    Word,
)
from tests.zoo.make_zoo import make_zoo

# Whisper's word tokens: a leading space, and numbers split at the thousands comma.
SENTENCE_WORDS = (" The", " hive", " shrinks", " to", " about", " 20", ",000", " bees", ".")


class SentenceTranscriber:
    """Hears the same sentence once a second, with Whisper-shaped word tokens."""

    name = "fixed-sentence"

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        seconds = len(audio) / SAMPLE_RATE
        info = TranscriptionInfo(backend=self.name, model="none", language="en", duration=seconds)
        return Transcription(info=info, segments=self._segments(seconds))

    @staticmethod
    def _segments(seconds: float) -> Iterator[Segment]:
        count = max(1, int(seconds))
        span = seconds / count
        for index in range(count):
            start = index * span
            step = span / len(SENTENCE_WORDS)
            words = tuple(
                Word(start + i * step, start + (i + 1) * step, text)
                for i, text in enumerate(SENTENCE_WORDS)
            )
            yield Segment(start, start + span, "".join(SENTENCE_WORDS), words)


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_zoo(tmp_path_factory.mktemp("zoo"))
