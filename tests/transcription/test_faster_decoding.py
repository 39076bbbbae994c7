"""Guarded prompting: each clip is prompted with the text before it, never with a loop;
with a temperature fallback that resets it, faster-whisper's own prompting.

:func:`~llama_index_video.transcription.faster_decoding.next_prompt` is checked on
constructed faster-whisper segments; the real model checks that the prompt reaches each
clip after the first, that with the fallback faster-whisper prompts over the same clips,
and that the prompted transcript keeps its times.
"""

from __future__ import annotations

import itertools

import pytest
from faster_whisper.transcribe import Segment as FasterSegment
from faster_whisper.transcribe import Word as FasterWord

from benchmarks.transcription_speed import word_error_rate
from llama_index_video.transcription.faster import FasterWhisperTranscriber
from llama_index_video.transcription.faster_decoding import (
    MIN_LOG_PROB,
    PROMPT_TOKENS,
    fallback_resets,
    next_prompt,
)

from .conftest import Clip

FLUENT = "Then we counted the boxes and wrote the numbers down."


def _written(text: str, tokens: list[int], *, avg_logprob: float = -0.2) -> FasterSegment:
    words = text.split()
    timed = [FasterWord(i * 0.4, (i + 1) * 0.4, f" {w}", 0.9) for i, w in enumerate(words)]
    return FasterSegment(
        id=1,
        seek=0,
        start=0.0,
        end=0.4 * len(words),
        text=f" {text}",
        tokens=tokens,
        avg_logprob=avg_logprob,
        compression_ratio=1.2,
        no_speech_prob=0.01,
        words=timed,
        temperature=0.0,
    )


def test_a_fluent_clip_hands_its_tokens_on_after_the_earlier_ones():
    clip = [_written(FLUENT, [5, 6, 7]), _written(FLUENT, [8])]
    assert next_prompt((1, 2), clip, language="en") == (1, 2, 5, 6, 7, 8)


def test_the_prompt_keeps_only_the_last_tokens():
    tokens = list(range(PROMPT_TOKENS + 50))
    prompt = next_prompt((), [_written(FLUENT, tokens)], language="en")
    assert prompt == tuple(tokens[-PROMPT_TOKENS:])


def test_a_loop_or_an_improbable_clip_prompts_nothing_and_silence_keeps_the_prompt():
    loop = _written("and we are going to have a great day " * 12, [9] * 40)
    assert next_prompt((1, 2), [_written(FLUENT, [5]), loop], language="en") == ()
    improbable = _written(FLUENT, [5], avg_logprob=MIN_LOG_PROB - 0.1)
    assert next_prompt((1, 2), [improbable], language="en") == ()
    assert next_prompt((1, 2), [], language="en") == (1, 2)


def test_only_a_fallback_that_gets_hot_enough_resets_faster_whispers_prompt():
    assert fallback_resets((0.0, 0.2, 0.4, 0.6, 0.8, 1.0)) and fallback_resets(0.7)
    assert not fallback_resets(0.0) and not fallback_resets((0.0, 0.2, 0.4))


def _calls(transcriber: FasterWhisperTranscriber, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The options of each call the transcriber's model gets for a clip or the clips
    (decoding a piece again uses the VAD), recorded as the real model runs."""
    whisper = transcriber._load(transcriber.model)[1]
    original = whisper.transcribe
    calls: list[dict] = []

    def transcribe(audio, **options):
        if not options["vad_filter"]:
            calls.append(options)
        return original(audio, **options)

    monkeypatch.setattr(whisper, "transcribe", transcribe)
    return calls


def test_each_clip_after_the_first_is_prompted_and_times_hold(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcriber = FasterWhisperTranscriber(language="en", condition_on_previous_text=True)
    calls = _calls(transcriber, monkeypatch)
    segments = list(transcriber.transcribe(narration.audio, source=narration.path).segments)

    prompts = [call.get("initial_prompt") for call in calls]
    assert len(prompts) >= 2 and prompts[0] is None
    assert all(isinstance(p, list) and p for p in prompts[1:])
    _heard_in_time(narration, segments)


def test_with_the_fallback_faster_whisper_prompts_over_the_same_clips(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    fallback = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    transcriber = FasterWhisperTranscriber(
        language="en", condition_on_previous_text=True, temperature=fallback
    )
    calls = _calls(transcriber, monkeypatch)
    segments = list(transcriber.transcribe(narration.audio, source=narration.path).segments)

    assert len(calls) == 1 and calls[0]["condition_on_previous_text"] is True
    clips = calls[0]["clip_timestamps"]
    assert isinstance(clips, list) and len(clips) >= 4  # two clips or more, ending in pauses
    assert calls[0]["temperature"] == fallback
    _heard_in_time(narration, segments)


def _heard_in_time(narration: Clip, segments) -> None:
    heard = " ".join(s.text for s in segments)
    spoken = " ".join(s["text"] for s in narration.sentences)
    assert word_error_rate(spoken, heard) <= 0.3
    starts = [s.start for s in segments]
    assert all(a <= b for a, b in itertools.pairwise(starts))
    for sentence in narration.sentences:
        nearest = min(starts, key=lambda start: abs(start - sentence["start"]))
        assert abs(nearest - sentence["start"]) <= 1.0, sentence["text"]
