"""A subtitle track that covers part of a recording: its cues where they are, the rest
of the speech transcribed (the new user's trial, issue 36: a track covering the first
minute of three lost the speech of the other two).

The recording is real speech (LibriVox, ``librivox_en.json``: five sentences with their
times); the track is written at test time with cues for the first two sentences only.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.transcription_speed import word_error_rate
from llama_index_video import schema
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Segment
from tests.reader.muxed import read_speech, write_mkv
from tests_support import LIBRIVOX

SENTENCES = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
CUES = [(s["start"], s["end"], f"Cue {n}: {s['text']}.") for n, s in enumerate(SENTENCES, 1)]
TOLERANCE = 1.0  # tiny.en segment starts can be ~1 s early after pauses


def _transcript(nodes):
    return [n for n in nodes if n.metadata[schema.MODALITY] == "transcript"]


class Counting:
    """A transcriber that counts what it is given, and hears nothing."""

    name = "counting"

    def __init__(self) -> None:
        self.given: list[float] = []

    def transcribe(self, audio, *, source=None):
        from llama_index_video.transcription.base import Transcription, TranscriptionInfo

        self.given.append(len(audio) / 16_000)
        return Transcription(TranscriptionInfo(self.name, "none", "en"), iter([]))


def test_speech_the_subtitles_do_not_cover_is_transcribed(tmp_path, transcriber):
    video = write_mkv(tmp_path / "reading.mkv", [read_speech(LIBRIVOX)], cues=CUES[:2])
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=transcriber, frames=None)

    result = reader.read(video)
    units = _transcript(result.nodes)
    covered = [u for u in units if u.metadata[schema.START_S] < SENTENCES[2]["start"] - TOLERANCE]
    heard = [u for u in units if u not in covered]

    # The cues, word for word, where they are; nothing transcribed over them.
    assert " ".join(u.text for u in covered) == " ".join(text for _, _, text in CUES[:2])
    # The three sentences after them, heard at their times (before: nothing after 9.8 s).
    assert heard, [u.text for u in units]
    assert heard[0].metadata[schema.START_S] == pytest.approx(SENTENCES[2]["start"], abs=TOLERANCE)
    assert heard[-1].metadata[schema.END_S] == pytest.approx(SENTENCES[-1]["end"], abs=TOLERANCE)
    said = " ".join(s["text"] for s in SENTENCES[2:])
    assert word_error_rate(said, " ".join(u.text for u in heard)) <= 0.2  # none cut off
    (note,) = [n for n in result.notes if "subtitles" in n]
    assert note.startswith("transcript from subtitles (embedded subtitle stream 1) and from ")
    assert note.endswith("which they do not cover")


def test_subtitles_that_cover_the_speech_are_used_alone(tmp_path):
    video = write_mkv(tmp_path / "reading.mkv", [read_speech(LIBRIVOX)], cues=CUES)
    counting = Counting()
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=counting, frames=None)

    result = reader.read(video)

    assert counting.given == []  # nothing to transcribe: the VAD hears speech only in cues
    assert " ".join(u.text for u in _transcript(result.nodes)) == " ".join(t for *_, t in CUES)
    assert "transcript from subtitles (embedded subtitle stream 1)" in result.notes


def test_a_gap_between_cues_with_speech_in_it_is_transcribed_alone(tmp_path):
    # Cues for sentences 1, 2 and 5: sentences 3 and 4 (10.4-21.2 s) are not covered.
    video = write_mkv(tmp_path / "reading.mkv", [read_speech(LIBRIVOX)], cues=[*CUES[:2], CUES[4]])
    counting = Counting()
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=counting, frames=None)

    reader.read(video)

    (given,) = counting.given
    gap = SENTENCES[3]["end"] - SENTENCES[2]["start"]
    assert given == pytest.approx(gap, abs=2 * TOLERANCE)


def test_speech_outside_the_cues_that_cannot_be_transcribed_leaves_the_cues_indexed(tmp_path):
    # Subtitles alone indexed the file before: speech outside them in a language no
    # allowed model writes must not fail it now.
    from llama_index_video.errors import UnsupportedLanguageError

    class Refusing:
        name = "refusing"

        def transcribe(self, audio, *, source=None):
            raise UnsupportedLanguageError(f"{source}: German speech", language="de")

    video = write_mkv(tmp_path / "reading.mkv", [read_speech(LIBRIVOX)], cues=CUES[:2])
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=Refusing(), frames=None)

    result = reader.read(video)

    assert " ".join(u.text for u in _transcript(result.nodes)) == " ".join(t for *_, t in CUES[:2])
    (note,) = [n for n in result.notes if "subtitles" in n]
    assert ", outside them, not transcribed: " in note and "German speech" in note


def test_cues_cover_their_time_and_a_margin_and_speech_outside_is_found():
    from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
    from llama_index_video.reader.uncovered import COVER_MARGIN, covered, uncovered_speech

    cues = [Segment(5.0, 7.0, "b"), Segment(0.0, 2.0, "a"), Segment(7.4, 8.0, "c")]
    cover = covered(cues)
    assert cover == [(-COVER_MARGIN, 2.0 + COVER_MARGIN), (5.0 - COVER_MARGIN, 8.0 + COVER_MARGIN)]
    samples = read_speech(LIBRIVOX)
    chunk = AudioChunk(100.0, samples)
    everything = list(uncovered_speech(chunk, []))
    assert everything[0].start == pytest.approx(100.0 + SENTENCES[0]["start"], abs=0.5)
    assert everything[-1].end == pytest.approx(100.0 + SENTENCES[-1]["end"], abs=0.5)
    assert all(len(c.samples) == round((c.end - c.start) * SAMPLE_RATE) for c in everything)
    assert list(uncovered_speech(chunk, [(99.0, 126.0)])) == []
