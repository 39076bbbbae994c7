"""Prompting: faster-whisper's own, over clips that end in pauses, started afresh after a
repetition loop.

:func:`~llama_index_video.transcription.faster_decoding.restart_after` is checked on
constructed clips; the real model checks that the clips are decoded in one prompted call,
that a segment judged a loop makes the rest be decoded again from its end with no
prompt (nothing lost, nothing written twice), and that the prompted transcript keeps its
times and is the same from one run to the next; a phrase said again and again restarts the
prompt after its third time, keeping every time it was said.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from benchmarks.transcription_speed import word_error_rate
from llama_index_video.media.audio import decode_audio_span
from llama_index_video.transcription import faster_decoding
from llama_index_video.transcription.base import Segment, audio_from
from llama_index_video.transcription.faster import FasterWhisperTranscriber
from llama_index_video.transcription.faster_decoding import restart_after
from llama_index_video.transcription.loops import RUN_SEGMENTS

from .conftest import Clip


def test_a_restart_cuts_the_clip_it_falls_in_and_keeps_the_later_ones():
    clips = [0.0, 28.0, 28.0, 51.5, 51.5, 60.0]
    assert restart_after(clips, 30.25) == [30.25, 51.5, 51.5, 60.0]
    assert restart_after(clips, 28.0) == [28.0, 51.5, 51.5, 60.0]
    assert restart_after(clips, 10.0) == [10.0, 28.0, 28.0, 51.5, 51.5, 60.0]
    assert restart_after(clips, 60.0) == []


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


@pytest.fixture(scope="module")
def prompted(narration: Clip) -> tuple[list[dict], list[Segment]]:
    """The narration decoded as by default: (the model's calls, the segments), for the
    tests that read the same decoding (a 60 s decoding takes about 4 CPU s)."""
    transcriber = FasterWhisperTranscriber(language="en")
    with pytest.MonkeyPatch.context() as monkeypatch:
        calls = _calls(transcriber, monkeypatch)
        segments = list(transcriber.transcribe(narration.audio, source=narration.path).segments)
    return calls, segments


def test_the_clips_are_decoded_in_one_prompted_call_and_times_hold(
    narration: Clip, prompted: tuple[list[dict], list[Segment]]
) -> None:
    calls, segments = prompted
    assert len(calls) == 1 and calls[0]["condition_on_previous_text"] is True
    assert calls[0]["temperature"] == 0.0 and calls[0]["initial_prompt"] is None
    clips = calls[0]["clip_timestamps"]
    assert isinstance(clips, list) and len(clips) >= 4  # two clips or more, ending in pauses
    _heard_in_time(narration, segments)


def test_the_old_decoding_is_one_unprompted_call(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcriber = FasterWhisperTranscriber(language="en", condition_on_previous_text=False)
    calls = _calls(transcriber, monkeypatch)
    segments = list(transcriber.transcribe(narration.audio, source=narration.path).segments)

    assert len(calls) == 1 and calls[0]["condition_on_previous_text"] is False
    _heard_in_time(narration, segments)


def test_after_a_loop_the_rest_is_decoded_again_unprompted_from_its_end(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcriber = FasterWhisperTranscriber(language="en")
    calls = _calls(transcriber, monkeypatch)
    judged: list[tuple[float, float]] = []

    def loops(segment, language):  # the second segment written is judged a loop, once
        judged.append((segment.start, segment.end))
        return len(judged) == 2

    monkeypatch.setattr(faster_decoding, "_loops", loops)
    segments = list(transcriber.transcribe(narration.audio, source=narration.path).segments)

    assert len(calls) == 2
    assert calls[1]["initial_prompt"] is None and calls[1]["condition_on_previous_text"]
    loop_end = judged[1][1]
    assert calls[1]["clip_timestamps"][0] == pytest.approx(loop_end)
    assert calls[1]["clip_timestamps"][-1] == calls[0]["clip_timestamps"][-1]
    _heard_in_time(narration, segments)
    words = " ".join(s.text for s in segments).split()
    spoken = " ".join(s["text"] for s in narration.sentences).split()
    assert len(words) <= len(spoken) + 5  # the rest once, not twice


def test_prompted_decoding_writes_the_same_from_one_run_to_the_next(
    narration: Clip, prompted: tuple[list[dict], list[Segment]]
) -> None:
    again = FasterWhisperTranscriber(language="en").transcribe(narration.audio.copy())
    runs = [
        [(s.start, s.end, s.text, s.words) for s in segments]
        for segments in (prompted[1], again.segments)
    ]
    assert runs[0] == runs[1] and runs[0]


def test_a_lead_in_is_decoded_for_the_first_prompt_and_none_of_it_is_returned(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audio before a chunk (:func:`audio_from`'s ``before``) is decoded first, as
    the chunk is, and the text it writes prompts the chunk's first window, after the
    user's own initial prompt; the chunk's segments are its own, on its timeline."""
    transcriber = FasterWhisperTranscriber(language="en", initial_prompt="Greenhouse.")
    whisper = transcriber._load(transcriber.model)[1]
    original = whisper.transcribe
    calls: list[tuple[dict, list[str]]] = []

    def transcribe(audio, **options):
        segments, info = original(audio, **options)
        if options["vad_filter"]:  # a piece decoded again
            return segments, info
        written = list(segments)
        calls.append((options, [s.text.strip() for s in written if s.text.strip()]))
        return iter(written), info

    monkeypatch.setattr(whisper, "transcribe", transcribe)
    sixth = narration.sentences[5]["start"] - 0.5  # in the pause before the sixth sentence
    seam = round(sixth * 16_000)
    with audio_from(sixth, before=narration.audio[:seam]):
        segments = list(transcriber.transcribe(narration.audio[seam:]).segments)

    (lead_in, written), (chunk, _) = calls
    assert lead_in["initial_prompt"] == "Greenhouse." and written
    assert chunk["initial_prompt"] == " ".join(["Greenhouse.", *written])
    assert chunk["condition_on_previous_text"] and chunk["clip_timestamps"][0] == 0.0
    later = narration.sentences[5:]
    assert all(0.0 <= s.start <= s.end <= narration.duration - sixth + 0.01 for s in segments)
    spoken = " ".join(s["text"] for s in later)
    assert word_error_rate(spoken, " ".join(s.text for s in segments)) <= 0.3
    starts = [word.start for segment in segments for word in segment.words]
    for sentence in later:  # each heard where it was said (segments may hold two)
        assert min(abs(start + sixth - sentence["start"]) for start in starts) <= 1.0
    words = " ".join(s.text for s in segments).split()
    assert len(words) <= len(spoken.split()) + 5  # none of what was said before


def test_with_the_fallback_faster_whisper_prompts_over_the_same_clips(
    narration: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    fallback = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    transcriber = FasterWhisperTranscriber(language="en", temperature=fallback)
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


READING = Path(__file__).resolve().parents[2] / "benchmarks" / "long_real" / "lj_reader_next.opus"


def test_a_phrase_said_again_and_again_restarts_the_prompt_and_keeps_every_saying(
    librivox: Clip, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real reader's "Italy is contentedly stagnant." (LJ001-0104) said four times, a
    second apart, then a real reading: each saying is a segment of the same text, so the
    prompt carries a run. After the third the rest is decoded again with no prompt, from
    its end; all four sayings stay where they were said (a run is not a loop: people
    repeat themselves). Carried on, the run twisted the reading after it: "ill disposed",
    said twice, came out "old-sposed" under every instruction set (tiny.en, main at
    109728c)."""
    said = decode_audio_span(READING, 19.3, 2.65).samples
    pause = np.zeros(16_000, dtype=np.float32)
    sayings = [index * (len(said) + len(pause)) / 16_000 for index in range(4)]
    reading_start = len(sayings) * (len(said) + len(pause)) / 16_000
    audio = np.concatenate([*[part for _ in sayings for part in (said, pause)], librivox.audio])
    transcriber = FasterWhisperTranscriber(language="en")
    calls = _calls(transcriber, monkeypatch)
    segments = list(transcriber.transcribe(audio).segments)

    heard = [s for s in segments if "stagnant" in s.text.lower()]
    assert len(heard) == len(sayings)
    assert all(abs(s.start - at) <= 0.6 for s, at in zip(heard, sayings, strict=True))
    assert len(calls) == 2 and calls[1]["initial_prompt"] is None
    assert calls[1]["clip_timestamps"][0] == pytest.approx(heard[RUN_SEGMENTS - 1].end, abs=0.05)
    reading = [s for s in segments if s.start >= reading_start - 0.5]
    ill_disposed = [
        word.start
        for segment in reading
        for word, after in itertools.pairwise(segment.words)
        if (_plain(word.text) == "ill" and _plain(after.text) == "disposed")
        or _plain(word.text) == "illdisposed"
    ]
    spoken = [s for s in librivox.sentences if "ill disposed" in s["text"]]
    assert len(ill_disposed) == len(spoken) == 2
    for heard_at, sentence in zip(ill_disposed, spoken, strict=True):  # in its sentence
        assert sentence["start"] - 0.5 <= heard_at - reading_start <= sentence["end"] + 0.5


def _plain(word: str) -> str:
    """A written word's letters, lower case ("Ill-disposed." -> "illdisposed")."""
    return re.sub(r"[^a-z]", "", word.lower())
