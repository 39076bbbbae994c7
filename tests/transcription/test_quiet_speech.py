"""A quiet voice after louder speech is heard: real speech only (a FLEURS Spanish reading,
3 s of silence, then a real French reading at -62 dBFS, tests/fixtures/quiet_speech).

Silero carries its state through a pass; heard in one pass from the start, the quiet
sentence scored as silence for most of its length and was not transcribed at all, with
nothing reported. Each silence after speech is now heard again from its own start
(:func:`llama_index_video.transcription.vad.speech_probabilities`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from faster_whisper.audio import decode_audio

from llama_index_video.transcription import FasterWhisperTranscriber, vad
from llama_index_video.transcription.base import SAMPLE_RATE
from tests_support import needs_base

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
QUIET = FIXTURES / "quiet_speech" / "fr_fleurs_quiet.json"
LOUD = FIXTURES / "real_languages" / "es_fleurs.ogg"
SILENCE_S = 3.0


def _join() -> tuple[np.ndarray, float, float]:
    """The loud reading, the silence, the quiet one; and where the quiet speech is (s)."""
    about = json.loads(QUIET.read_text("utf-8"))
    loud = decode_audio(str(LOUD), sampling_rate=SAMPLE_RATE)
    quiet = decode_audio(str(QUIET.parent / about["audio"]), sampling_rate=SAMPLE_RATE)
    silence = np.zeros(round(SILENCE_S * SAMPLE_RATE), np.float32)
    offset = (len(loud) + len(silence)) / SAMPLE_RATE
    start, end = about["speech"]
    return np.concatenate([loud, silence, quiet]), offset + start, offset + end


def _covered(spans: list[vad.Span], start: float, end: float) -> float:
    return sum(max(0.0, min(end, b / SAMPLE_RATE) - max(start, a / SAMPLE_RATE)) for a, b in spans)


@pytest.fixture(scope="module")
def join() -> tuple[np.ndarray, float, float]:
    return _join()


def test_the_quiet_sentence_is_speech_to_the_vad(join: tuple[np.ndarray, float, float]) -> None:
    audio, start, end = join
    heard = vad.VoiceActivity(audio).spans(vad.TRANSCRIPTION)
    # One pass from the start kept 3.7 s of its 8.4 s; heard alone, all of it from 1.8 s.
    assert _covered(heard, start, end) >= 0.8 * (end - start)


@needs_base
def test_the_quiet_sentence_after_louder_speech_is_transcribed(
    join: tuple[np.ndarray, float, float],
) -> None:
    audio, start, end = join
    segments = list(FasterWhisperTranscriber().transcribe(audio).segments)
    over = [s for s in segments if s.end > start and s.start < end]
    assert over, f"nothing transcribed in {start:.1f}-{end:.1f} s: {segments}"
    # Heard alone, the clip is written from 1.8 s to 8.6 s (of 10.2 s).
    assert over[0].start == pytest.approx(start, abs=1.5)
    assert sum(min(end, s.end) - max(start, s.start) for s in over) >= 4.0
    assert sum(len(s.words) for s in over) >= 6
