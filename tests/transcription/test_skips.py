"""Speech a window skipped is decoded again (issue 36).

:func:`~llama_index_video.transcription.skips.filled` is checked with a scripted
``redecode`` and speech measure; the transcriber decodes real speech again through it
when its segments look skipped (here: every one, the bounds lowered).
"""

from __future__ import annotations

import itertools
import logging

import pytest

from benchmarks.transcription_speed import word_error_rate
from llama_index_video.transcription import skips
from llama_index_video.transcription.base import Segment, Word
from llama_index_video.transcription.loops import Remedy
from llama_index_video.transcription.skips import filled, stretched_word

from .conftest import Clip


def _segment(start: float, timed: list[tuple[float, float, str]]) -> Segment:
    words = tuple(Word(a, b, text) for a, b, text in timed)
    return Segment(start, timed[-1][1], " ".join(t for _, _, t in timed), words)


SKIPPED = _segment(
    10.0, [(10.0, 10.4, "taken"), (10.4, 10.7, "the"), (10.7, 11.0, "letter"), (11.0, 13.6, "the")]
)
"""The last "the" lasts 2.6 s: the words after it were never written."""
NEXT = _segment(13.6, [(13.6, 14.0, "his"), (14.0, 14.5, "model.")])
WHOLE = _segment(
    10.0,
    [
        *[(10.0, 10.4, "taken"), (10.4, 10.7, "the"), (10.7, 11.0, "letter"), (11.0, 11.3, "of")],
        *[(11.3, 11.5, "the"), (11.5, 12.4, "Elzevirs"), (12.4, 13.5, "seventeenth")],
    ],
)


def _all_speech(start: float, end: float) -> float:
    return end - start


def _no_speech(start: float, end: float) -> float:
    return 0.0


def test_a_word_lasting_over_two_seconds_of_speech_is_a_skip_and_over_a_pause_is_not():
    assert stretched_word(SKIPPED, _all_speech) == SKIPPED.words[-1]
    assert stretched_word(SKIPPED, _no_speech) is None
    assert stretched_word(NEXT, _all_speech) is None


def test_words_over_two_seconds_apart_over_speech_are_a_skip_and_over_a_pause_are_not():
    gap = _segment(
        796.1, [(796.1, 796.6, "so"), (796.6, 797.4, "on,"), (802.1, 802.1, "and")]
    )  # the hour of real speech: 4.7 s said between "on," and "and", nothing written
    assert stretched_word(gap, _all_speech) == Word(797.4, 802.1, "")
    assert stretched_word(gap, _no_speech) is None
    close = _segment(10.0, [(10.0, 10.4, "so"), (11.9, 12.2, "on")])  # 1.5 s apart
    assert stretched_word(close, _all_speech) is None


def test_a_segment_with_no_word_for_a_skip_is_decoded_again_up_to_the_next_one(caplog):
    caplog.set_level(logging.INFO, logger="llama_index_video.transcription.skips")
    gap = _segment(10.0, [(10.0, 10.4, "taken"), (10.4, 10.7, "the"), (13.4, 13.6, "his")])
    out = list(
        filled(
            [gap, NEXT],
            until=60.0,
            speech=_all_speech,
            redecode=lambda start, end, remedy: [WHOLE],
            where="a.ogg",
        )
    )
    assert out == [WHOLE, NEXT]
    assert "no word written for 2.7 s" in caplog.text


def test_a_segment_that_skipped_speech_is_decoded_again_up_to_the_next_one(caplog):
    caplog.set_level(logging.INFO, logger="llama_index_video.transcription.skips")
    asked: list[tuple[float, float, str]] = []

    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        asked.append((start, end, remedy.name))
        return [WHOLE]

    out = list(
        filled([SKIPPED, NEXT], until=60.0, speech=_all_speech, redecode=redecode, where="a.ogg")
    )
    assert asked == [(10.0, 13.6, "alone")]
    assert out == [WHOLE, NEXT]
    assert "a.ogg: decoded 00:10-00:13 again (alone)" in caplog.text


def test_what_decoding_again_hears_is_kept_only_when_it_holds_more_words_and_no_loop():
    fewer = [_segment(10.0, [(10.0, 10.5, "taken")])]
    loop = [Segment(10.0, 13.6, "the letter " * 40)]
    for heard in (fewer, loop):
        out = list(
            filled(
                [SKIPPED, NEXT],
                until=60.0,
                speech=_all_speech,
                redecode=lambda start, end, remedy, heard=heard: heard,
                where="a.ogg",
            )
        )
        assert out == [SKIPPED, NEXT]


def test_nothing_is_decoded_again_when_nothing_was_skipped():
    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        raise AssertionError("nothing to decode again")

    segments = [NEXT, WHOLE]
    assert list(filled(segments, until=60.0, speech=_all_speech, redecode=redecode, where="a")) == (
        segments
    )


def test_the_last_segment_is_decoded_again_up_to_the_end_of_the_audio_within_a_window():
    asked: list[tuple[float, float]] = []

    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        asked.append((start, end))
        return [WHOLE]

    list(filled([SKIPPED], until=100.0, speech=_all_speech, redecode=redecode, where="a"))
    assert asked == [(10.0, 40.0)]


def test_the_transcriber_decodes_again_what_looks_skipped_and_hears_the_same_speech(
    librivox: Clip, monkeypatch
):
    pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    again: list[tuple[float, float]] = []
    original = skips._again

    def spy(segment, word, following, redecode, where):
        again.append((segment.start, following))
        return original(segment, word, following, redecode, where)

    monkeypatch.setattr(skips, "MAX_WORD_SECONDS", 0.0)
    monkeypatch.setattr(skips, "MIN_SKIPPED_SPEECH", 0.0)
    monkeypatch.setattr(skips, "_again", spy)
    said = [s for s in librivox.sentences if s["end"] < 10.0]  # two sentences, 10 s
    result = FasterWhisperTranscriber(language="en").transcribe(librivox.audio[:160_000])
    segments = list(result.segments)

    assert again and segments  # decoded again
    spoken = " ".join(s["text"] for s in said)
    assert word_error_rate(spoken, " ".join(s.text for s in segments)) <= 0.15
    words = [word for segment in segments for word in segment.words]
    assert all(a.start <= b.start for a, b in itertools.pairwise(words))
