"""Speech no segment covers is decoded again, or reported as dropped (issue 36 item 4).

On the trial's 11-minute recording (meetings, then clips in other languages), ``base``
told Spanish wrote the first 10 s of a 29 s window (two Spanish readings and a French
one) and closed the window, so the second reading and the French were written nowhere,
and nothing said so. :func:`~llama_index_video.transcription.skips.heard` is checked with
a scripted ``redecode`` and speech measure, then on the same real clips.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from llama_index_video.transcription.base import DroppedSpeech, Segment, Word
from llama_index_video.transcription.loops import Remedy
from llama_index_video.transcription.skips import UNHEARD, heard

LANGUAGES = Path(__file__).resolve().parent.parent / "fixtures" / "real_languages"


def _said(start: float, end: float, text: str = "the pump keeps the water moving") -> Segment:
    return Segment(start, end, text, (Word(start, end, text),))


def _speech_everywhere(start: float, end: float) -> float:
    return end - start


def _heard(
    segments: list[Segment],
    redecode: Callable[[float, float, Remedy], list[Segment]],
    dropped: list[DroppedSpeech],
    *,
    until: float,
    speech: Callable[[float, float], float] = _speech_everywhere,
) -> list[Segment]:
    return list(
        heard(
            segments,
            since=0.0,
            until=until,
            speech=speech,
            redecode=redecode,
            where="pond.wav",
            into=dropped,
        )
    )


def test_speech_between_segments_is_decoded_again_and_put_in_order():
    asked: list[tuple[float, float]] = []

    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        asked.append((start, end))
        return [_said(start + 1.0, start + 3.0)]

    dropped: list[DroppedSpeech] = []
    out = _heard(
        [_said(0.0, 2.0), _said(12.0, 14.0)],
        redecode,
        dropped,
        until=14.5,
        speech=_speech_everywhere,
    )
    assert asked[0] == (2.0, 12.0)
    assert [s.start for s in out] == sorted(s.start for s in out)
    assert out[1].start == 3.0 and out[-1].start == 12.0
    assert dropped == []


def test_speech_nothing_is_heard_in_is_reported_with_its_span_and_a_pause_is_left():
    def deaf(start: float, end: float, remedy: Remedy) -> list[Segment]:
        return []

    def speech(start: float, end: float) -> float:
        return max(0.0, min(end, 40.0) - max(start, 30.0))  # speech only at 30-40 s

    dropped: list[DroppedSpeech] = []
    out = _heard(
        [_said(0.0, 2.0), _said(20.0, 22.0), _said(50.0, 52.0)],
        deaf,
        dropped,
        until=52.0,
        speech=speech,
    )
    assert len(out) == 3
    assert dropped == [DroppedSpeech(22.0, 50.0, UNHEARD)]


def test_a_stretch_already_dropped_as_a_loop_is_not_decoded_again():
    def never(start: float, end: float, remedy: Remedy) -> list[Segment]:
        raise AssertionError("decoded again")

    dropped = [DroppedSpeech(3.0, 9.0, "its text repeats itself")]
    out = _heard(
        [_said(0.0, 2.0), _said(10.0, 12.0)], never, dropped, until=12.0, speech=_speech_everywhere
    )
    assert len(out) == 2 and len(dropped) == 1


def _trial_stretch() -> tuple[np.ndarray, list[tuple[float, float]]]:
    """The trial's Spanish stretch rebuilt from the same clips: 2.6 s of silence, two
    Spanish readings and the French clip with 5 s between them, 2.6 s of silence; and
    where each clip is (seconds)."""
    from faster_whisper.audio import decode_audio

    rate = 16_000
    parts: list[np.ndarray] = [np.zeros(round(2.6 * rate), np.float32)]
    spans: list[tuple[float, float]] = []
    for name in ("es_fleurs.ogg", "es_mls.opus", "fr_commonvoice.flac"):
        at = sum(len(p) for p in parts) / rate
        clip = decode_audio(str(LANGUAGES / name), sampling_rate=rate)
        spans.append((at, at + len(clip) / rate))
        parts += [clip, np.zeros(5 * rate, np.float32)]
    parts[-1] = np.zeros(round(2.6 * rate), np.float32)
    return np.concatenate(parts), spans


def test_the_second_reading_a_window_closed_on_is_heard():
    from faster_whisper import WhisperModel

    from llama_index_video.transcription.faster_decoding import Decoding, Pass, decode
    from llama_index_video.transcription.models import MULTILINGUAL_MODEL, resolve_model
    from llama_index_video.transcription.vad import VoiceActivity

    audio, (_, second, french) = _trial_stretch()
    resolved = resolve_model(MULTILINGUAL_MODEL, download_root=None, allow_download=False)
    whisper = WhisperModel(str(resolved.path), device="cpu", compute_type="int8")
    run = Pass(0.0, len(audio) / 16_000, "es", resolved, whisper)
    options = Decoding(  # the transcriber's defaults
        beam_size=5,
        temperature=0.0,
        vad_filter=True,
        word_timestamps=True,
        condition_on_previous_text=True,
        initial_prompt=None,
    )
    dropped: list[DroppedSpeech] = []
    decoded = decode(run, VoiceActivity(audio), "trial.wav", dropped, options=options, whole=False)
    segments = list(decoded.segments)

    def words_in(span: tuple[float, float]) -> int:
        return sum(len(s.text.split()) for s in segments if span[0] - 1.0 <= s.start < span[1])

    assert words_in(second) >= 10, segments
    assert words_in(french) >= 2 or any(d.start < french[1] for d in dropped), segments
