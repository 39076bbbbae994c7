"""Where the speech is: the spans cut from Silero's probabilities are faster-whisper's own
(on made-up probabilities and on real recordings), and a transcription hears Silero once,
the language check included, with the words and times faster-whisper gives on the speech
its own VAD keeps, in windows that end in pauses."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from faster_whisper import WhisperModel
from faster_whisper import vad as faster_vad
from faster_whisper.audio import decode_audio
from faster_whisper.transcribe import restore_speech_timestamps
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_video.errors import TranscriptionError
from llama_index_video.transcription import FasterWhisperTranscriber, resolve_model, vad
from llama_index_video.transcription.base import SAMPLE_RATE
from llama_index_video.transcription.windows import clip_timestamps
from tests_support import needs_base

from .conftest import SPEECH, Clip

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = [
    ROOT / "examples" / "media" / "team_sync.mp3",  # synthetic, four voices
    SPEECH / "bicycle_en.ogg",  # synthetic; a 1.25 s pause whose edge hovers
    SPEECH.parent / "real_speech" / "phone_call_2f.flac",  # real, fast turns
    SPEECH.parent / "real_speech" / "ami_tst01.flac",  # real, long silences
    SPEECH.parent / "real_languages" / "es_mls.opus",  # real Spanish
]
GRAINS = (vad.TRANSCRIPTION, vad.UTTERANCES, vad.TURNS)


def _faster_whisper_spans(samples: np.ndarray, grain: vad.Grain) -> list[vad.Span]:
    options = faster_vad.VadOptions(
        threshold=grain.threshold,
        min_silence_duration_ms=grain.min_pause_ms,
        speech_pad_ms=grain.pad_ms,
    )
    return [(r["start"], r["end"]) for r in faster_vad.get_speech_timestamps(samples, options)]


@contextmanager
def _silero_heard_as(probabilities: np.ndarray) -> Iterator[None]:
    """faster-whisper's VAD model replaced by one that hears ``probabilities``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(faster_vad, "get_vad_model", lambda: lambda padded: probabilities)
        yield


# Values at and around the thresholds (speech from 0.5, 0.35 or 0.2, silence under 0.35,
# 0.2 or 0.05).
LEVELS = st.sampled_from(
    [0.0, 0.04, 0.05, 0.06, 0.1, 0.19, 0.2, 0.21, 0.34, 0.35, 0.36, 0.49, 0.5, 0.51, 0.9, 1.0]
)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    length=st.integers(min_value=0, max_value=200 * vad.WINDOW),
    grain=st.one_of(
        st.sampled_from(GRAINS),
        st.builds(
            vad.Grain,
            min_pause_ms=st.integers(min_value=0, max_value=3000),
            pad_ms=st.integers(min_value=0, max_value=600),
            threshold=st.sampled_from([0.2, 0.35, 0.5]),
        ),
    ),
)
def test_spans_are_faster_whispers_on_any_probabilities(
    data: st.DataObject, length: int, grain: vad.Grain
) -> None:
    windows = length // vad.WINDOW + 1  # the audio is padded to whole windows
    heard = np.array(data.draw(st.lists(LEVELS, min_size=windows, max_size=windows)))
    with _silero_heard_as(heard):
        expected = _faster_whisper_spans(np.zeros(length, np.float32), grain)
    assert vad.speech_spans(heard, length, grain) == expected


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_one_pass_gives_faster_whispers_spans_at_every_grain(path: Path) -> None:
    samples = decode_audio(str(path), sampling_rate=SAMPLE_RATE)
    heard = vad.silero_pass(samples)
    for grain in GRAINS:
        spans = vad.speech_spans(heard, len(samples), grain)
        assert spans, f"{path.name}: no speech found"
        assert spans == _faster_whisper_spans(samples, grain), (path.name, grain)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_silences_heard_again_only_add_speech(path: Path) -> None:
    """Hearing each silence afresh (and what follows it, for FRESH_FOR_S) raises
    probabilities there that one pass heard under the threshold, and nothing else, so
    every span faster-whisper's VAD keeps lies inside one of ours."""
    samples = decode_audio(str(path), sampling_rate=SAMPLE_RATE)
    once = vad.silero_pass(samples)
    again = vad.speech_probabilities(samples)
    after = math.ceil(vad.FRESH_FOR_S * SAMPLE_RATE / vad.WINDOW)
    inside = np.zeros(len(once), bool)
    for first, last in vad.silences(once):
        inside[first : last + after] = True
    inside &= once < vad.TRANSCRIPTION.threshold
    assert np.array_equal(again[~inside], once[~inside])
    assert (again >= once).all()
    for grain in GRAINS:
        ours = vad.VoiceActivity(samples).spans(grain)
        for start, end in _faster_whisper_spans(samples, grain):
            assert any(a <= start and end <= b for a, b in ours), (path.name, grain, start)


def test_speech_after_three_minutes_of_silence_is_heard_as_speech_alone_is() -> None:
    """Silero's state wears down in a long silence: one pass heard 26.6 s of this real
    AMI excerpt's 28.2 s after 180 s of digital silence, and a French reading after the
    same silence as 1.1 s of its 7.4 (a new user's trial: its first sentence was left out
    of the transcript without a word). A silence is heard again in fresh pieces, on into
    the speech after it."""
    speech = decode_audio(
        str(SPEECH.parent / "real_speech" / "ami_dev00.flac"), sampling_rate=SAMPLE_RATE
    )
    seconds = len(speech) / SAMPLE_RATE
    alone = vad.VoiceActivity(speech).seconds(vad.TRANSCRIPTION, 0, seconds)
    late = vad.VoiceActivity(np.concatenate([np.zeros(180 * SAMPLE_RATE, np.float32), speech]))
    assert late.seconds(vad.TRANSCRIPTION, 0, 180) == 0
    assert late.seconds(vad.TRANSCRIPTION, 180, 180 + seconds) >= alone - 0.5


def test_no_speech_has_no_spans() -> None:
    assert vad.VoiceActivity(np.zeros(SAMPLE_RATE, np.float32)).spans(vad.TRANSCRIPTION) == []
    assert vad.speech_spans(np.zeros(0, np.float32), 0, vad.UTTERANCES) == []


@needs_base
def test_a_transcription_hears_silero_once_over_the_whole_audio_with_the_language_checked(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = faster_vad.get_vad_model()
    hearings: list[int] = []

    def counted(padded: np.ndarray) -> np.ndarray:
        hearings.append(len(padded))
        return model(padded)  # type: ignore[no-any-return]

    monkeypatch.setattr(faster_vad, "get_vad_model", lambda: counted)
    transcription = FasterWhisperTranscriber().transcribe(narration.audio)
    segments = list(transcription.segments)
    assert transcription.info.options["languages"], "the language was not checked"
    assert transcription.info.language == "en"
    assert segments
    # Once over the whole audio; then only the silences after speech, once each.
    assert hearings[0] >= len(narration.audio)
    assert all(length < len(narration.audio) for length in hearings[1:])
    assert sum(hearings[1:]) <= hearings[0]


def test_the_words_and_times_are_those_of_faster_whispers_own_vad(narration: Clip) -> None:
    """faster-whisper's own VAD keeps the speech; its windows end in pauses (.windows)."""
    transcriber = FasterWhisperTranscriber(language="en", cpu_threads=2)
    ours = [
        (s.start, s.end, s.text, [(w.start, w.end) for w in s.words])
        for s in transcriber.transcribe(narration.audio).segments
    ]
    whisper = WhisperModel(str(resolve_model("tiny.en").path), compute_type="int8", cpu_threads=2)
    chunks = faster_vad.get_speech_timestamps(narration.audio, faster_vad.VadOptions())
    kept = [(c["start"], c["end"]) for c in chunks]
    utterances = _faster_whisper_spans(narration.audio, vad.UTTERANCES)
    segments, _ = whisper.transcribe(
        np.concatenate([narration.audio[a:b] for a, b in kept]),
        language="en",
        beam_size=transcriber.beam_size,
        temperature=transcriber.temperature,
        vad_filter=False,
        word_timestamps=True,
        condition_on_previous_text=transcriber.condition_on_previous_text,
        clip_timestamps=clip_timestamps(kept, utterances),
    )
    theirs = [
        (s.start, s.end, s.text.strip(), [(w.start, w.end) for w in s.words or ()])
        for s in restore_speech_timestamps(segments, chunks, SAMPLE_RATE)
    ]
    assert len(ours) == len(theirs) >= 8
    for mine, own in zip(ours, theirs, strict=True):
        assert mine[2] == own[2]
        assert mine[0] == pytest.approx(own[0], abs=0.01)
        assert mine[1] == pytest.approx(own[1], abs=0.01)
        assert [w[0] for w in mine[3]] == pytest.approx([w[0] for w in own[3]], abs=0.01)


@pytest.mark.parametrize("language", ["en", None], ids=["told English", "language checked"])
def test_a_failing_vad_is_a_transcription_error_naming_the_file(
    narration: Clip, monkeypatch: pytest.MonkeyPatch, language: str | None
) -> None:
    def broken(padded: np.ndarray) -> np.ndarray:
        raise RuntimeError("onnxruntime: session failed")

    monkeypatch.setattr(faster_vad, "get_vad_model", lambda: broken)
    transcriber = FasterWhisperTranscriber(language=language)
    with pytest.raises(TranscriptionError, match=r"talk\.mp4.*session failed"):
        transcriber.transcribe(narration.audio, source=Path("talk.mp4"))
