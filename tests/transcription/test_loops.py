"""Repetition loops are decoded again before anything is dropped (issue 36).

The ladder of :func:`~llama_index_video.transcription.loops.mend` is checked with a
scripted ``redecode`` (which remedy writes what); real speech recognition checks the
whole path: what tiny.en writes for Spanish speech when told it is English loops, and
that speech is either decoded again or listed as dropped, never lost in silence.
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import pytest
from faster_whisper.audio import decode_audio

from llama_index_video.transcription.base import DroppedSpeech, Segment, Word
from llama_index_video.transcription.loops import REMEDIES, Remedy, ends_a_run, mend, mended
from llama_index_video.transcription.skips import UNHEARD
from llama_index_video.transcription.vad import TRANSCRIPTION, VoiceActivity

SPEECH = Path(__file__).resolve().parent.parent / "fixtures" / "speech"
LOOP = Segment(10.0, 28.0, "la la la " * 30)
FLUENT = "Then we counted the boxes and wrote the numbers down."


def _fluent(start: float, end: float) -> Segment:
    words = FLUENT.split()
    step = (end - start) / len(words)
    timed = tuple(Word(start + i * step, start + (i + 1) * step, w) for i, w in enumerate(words))
    return Segment(start, end, FLUENT, timed)


def test_a_loop_decoded_again_without_a_loop_is_kept_and_nothing_is_dropped(caplog):
    caplog.set_level(logging.INFO, logger="llama_index_video.transcription.loops")
    tried: list[tuple[str, float, float]] = []

    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        tried.append((remedy.name, start, end))
        looping = remedy is REMEDIES[0]  # alone, it loops again; penalised, it does not
        return [Segment(start, end, LOOP.text)] if looping else [_fluent(start, end)]

    dropped: list[DroppedSpeech] = []
    kept = mend(LOOP, "its text repeats itself", redecode, where="a.wav", model="m", into=dropped)

    assert [t[0] for t in tried] == [REMEDIES[0].name, REMEDIES[1].name]
    assert [(s.start, s.end, s.text) for s in kept] == [(10.0, 28.0, FLUENT)]
    assert dropped == []
    assert "decoded 00:10-00:28 again" in caplog.text


def test_what_still_loops_after_every_remedy_is_dropped_with_its_span(caplog):
    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        if remedy.window is None:
            return [Segment(start, end, LOOP.text)]
        # In short windows the first piece is heard, the rest still loops.
        return [_fluent(start, end) if start == LOOP.start else Segment(start, end, LOOP.text)]

    dropped: list[DroppedSpeech] = []
    kept = mend(LOOP, "its text repeats itself", redecode, where="a.wav", model="m", into=dropped)

    assert [s.text for s in kept] == [FLUENT]
    assert kept[0].start == LOOP.start and kept[0].end == pytest.approx(LOOP.start + 9.0)
    assert [(d.start, d.end) for d in dropped] == [pytest.approx((19.0, 28.0))]
    assert "a.wav: dropped what model 'm' wrote for 00:19-00:28" in caplog.text


def test_a_loop_over_no_audio_is_dropped_without_decoding_it_again():
    def redecode(start: float, end: float, remedy: Remedy) -> list[Segment]:
        raise AssertionError("nothing to decode")

    dropped: list[DroppedSpeech] = []
    loop = Segment(5.0, 5.2, LOOP.text)
    assert mend(loop, "why", redecode, where="a.wav", model="m", into=dropped) == []
    assert dropped == [DroppedSpeech(5.0, 5.2, "why")]


@pytest.mark.parametrize(("start", "end", "window"), [(0.0, 28.0, 10.0), (3.0, 9.0, 10.0)])
def test_remedy_pieces_cover_the_span_in_order_within_the_window(start, end, window):
    pieces = list(Remedy(name="w", window=window).pieces(start, end))
    assert pieces[0][0] == start and pieces[-1][1] == end
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert all(0 < b - a <= window for a, b in pieces)
    assert list(Remedy(name="all").pieces(start, end)) == [(start, end)]


@pytest.mark.parametrize("clip", ["silero_es", "sales_es"])
def test_speech_is_decoded_again_or_listed_as_dropped_never_lost_in_silence(clip):
    # tiny.en told Spanish speech is English writes repetition loops there: before,
    # they were dropped and only logged, so the speech was silently missing.
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    audio = decode_audio(str(SPEECH / f"{clip}.ogg"), sampling_rate=16_000)
    transcription = FasterWhisperTranscriber(language="en").transcribe(audio)
    segments = list(transcription.segments)
    covered = [(s.start, s.end) for s in segments] + [
        (d.start, d.end) for d in transcription.dropped
    ]
    speech = [(a / 16_000, b / 16_000) for a, b in VoiceActivity(audio).spans(TRANSCRIPTION)]
    assert speech
    for start, end in speech:
        # Word times trim a segment to its first and last word, and what tiny.en makes
        # of Spanish is short: a third of each stretch of speech, not all of it.
        heard = sum(max(0.0, min(end, b) - max(start, a)) for a, b in covered)
        assert heard >= (end - start) / 3, (start, end, covered)
    for dropped in transcription.dropped:
        assert 0.0 <= dropped.start < dropped.end <= len(audio) / 16_000
        # a loop mend left, or speech after it nothing else was heard in (.skips.heard)
        assert (
            "repeats itself" in dropped.reason
            or "last no time" in dropped.reason
            or dropped.reason == UNHEARD
        )


def test_a_loop_is_mended_up_to_where_the_next_segment_begins():
    # A loop stamped 4-5 s ate the audio up to the next segment at 9 s; the last loop
    # ate the audio up to its end.
    spans: list[tuple[float, float]] = []

    def mend_span(loop: Segment, reason: str) -> list[Segment]:
        spans.append((loop.start, loop.end))
        return [_fluent(loop.start, loop.end)]

    stream = [_fluent(0.0, 3.0), Segment(4.0, 5.0, LOOP.text), _fluent(9.0, 12.0)]
    stream.append(Segment(13.0, 13.5, LOOP.text))
    out = list(mended(stream, until=20.0, mend=mend_span))

    assert spans == [(4.0, 9.0), (13.0, 20.0)]
    assert [(s.start, s.end) for s in out] == [(0.0, 3.0), (4.0, 9.0), (9.0, 12.0), (13.0, 20.0)]


def test_a_loop_too_short_to_decode_is_widened_back_over_the_segments_before_it():
    # The synthetic 20-minute recording's 06:49: "every Tuesday." was written, then a
    # loop stamped 0.4 s; "The grammar society rehearses", said before, was lost.
    spans: list[tuple[float, float]] = []

    def mend_span(loop: Segment, reason: str) -> list[Segment]:
        spans.append((loop.start, loop.end))
        heard = f"{FLUENT} The grammar society rehearses every Tuesday."
        return [Segment(loop.start, loop.end, heard)]

    earlier, before = _fluent(0.0, 3.0), Segment(8.4, 9.2, "every Tuesday.")
    stream = [earlier, _fluent(4.0, 7.0), before, Segment(9.3, 9.7, LOOP.text)]
    stream.append(_fluent(9.7, 12.0))
    out = list(mended(stream, until=20.0, mend=mend_span))

    assert spans == [(4.0, 9.7)]  # back 5 s from the loop's end, whole segments
    assert [(s.start, s.end) for s in out] == [(0.0, 3.0), (4.0, 9.7), (9.7, 12.0)]
    assert "grammar society" in out[1].text


def test_a_widened_loop_that_hears_fewer_words_keeps_the_segments_and_drops_the_loop():
    spans: list[tuple[float, float]] = []

    def mend_span(loop: Segment, reason: str) -> list[Segment]:
        spans.append((loop.start, loop.end))
        return [Segment(loop.start, loop.end, "Tuesday.")] if loop.end - loop.start > 1 else []

    before = _fluent(6.0, 9.2)
    stream = [before, Segment(9.3, 9.7, LOOP.text), _fluent(9.7, 12.0)]
    out = list(mended(stream, since=5.5, until=20.0, mend=mend_span))

    assert spans == [(5.5, 9.7), (9.3, 9.7)]  # widened (not before since), then alone
    assert [(s.start, s.end) for s in out] == [(6.0, 9.2), (9.7, 12.0)]


@pytest.mark.parametrize(
    ("said", "run"),
    [
        (["Thank you.", "thank you", "Thank you!"], True),
        (["The Chiswick press.", "Thank you.", "Thank you.", "Thank you."], True),
        (["Thank you.", "Thank you."], False),
        (["Thank you.", "Thank you.", "Thank you.", "In 1844."], False),
        (["Thank you.", "Thank you, Anna.", "Thank you."], False),
        (["...", "...", "..."], False),
    ],
)
def test_a_run_is_the_last_three_segments_saying_one_same_text(said, run):
    assert ends_a_run(said) is run
