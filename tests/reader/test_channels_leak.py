"""Two lapel microphones in one room: each hears the other person too, quieter. Each
channel heard alone transcribes the other's words as well; only the words where a
channel is the louder one are its speaker's, so each sentence is stored once.

The LibriVox reading (real speech, ``librivox_en.json``: five sentences with their
times): the fourth sentence on the right channel, the others on the left, each also
reaching the other microphone 12 dB under and 2 ms later.
"""

from __future__ import annotations

import json

import numpy as np

from benchmarks.stereo_speakers import in_order_recall
from benchmarks.transcription_speed import normalise_words
from llama_index_video import schema
from llama_index_video.media.audio import SAMPLE_RATE
from llama_index_video.reader.channels import louder_only
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Segment, Word
from tests.reader.muxed import read_speech, write_mkv
from tests_support import LIBRIVOX

READING = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
B = READING[3]  # the right speaker's sentence; the left speaker reads the others
OWN_WORDS = set(normalise_words(B["text"])) - {
    word for s in READING if s is not B for word in normalise_words(s["text"])
}  # married, woman, still, more, a, respectable, than
LEAK_DB = 12.0
DELAY = int(0.002 * SAMPLE_RATE)


def _leaked(path):
    reading = read_speech(LIBRIVOX)
    right = np.zeros_like(reading)
    span = slice(int(B["start"] * SAMPLE_RATE) - 1600, int(B["end"] * SAMPLE_RATE) + 1600)
    right[span] = reading[span]
    left = reading - right
    quieter = 10 ** (-LEAK_DB / 20)

    def later(samples):
        return np.concatenate([np.zeros(DELAY, np.float32), samples[:-DELAY]]) * quieter

    return write_mkv(path, [np.stack([left + later(right), right + later(left)])])


def test_a_leaked_sentence_is_stored_once_under_its_own_speaker(transcriber, tmp_path):
    reader = VideoReader(media_dir=tmp_path, transcriber=transcriber, frames=None)

    result = reader.read(_leaked(tmp_path / "room.mkv"))
    units = [n for n in result.nodes if n.metadata[schema.MODALITY] == "transcript"]
    by = {
        label: [u for u in units if u.metadata.get(schema.SPEAKER) == label]
        for label in ("SPEAKER_1", "SPEAKER_2")
    }

    assert any("two voices on two channels" in note for note in result.notes)
    right = " ".join(u.text for u in by["SPEAKER_2"])
    assert in_order_recall(B["text"], right) >= 0.8
    assert all(
        B["start"] - 1.0 <= u.metadata[schema.START_S]
        and u.metadata[schema.END_S] <= B["end"] + 1.0
        for u in by["SPEAKER_2"]
    )
    # Before, the left channel's transcript held the leaked sentence too.
    left = " ".join(u.text for u in by["SPEAKER_1"])
    assert len(OWN_WORDS & set(normalise_words(left))) <= 1
    assert len(OWN_WORDS & set(normalise_words(right))) >= 0.8 * len(OWN_WORDS)
    others = " ".join(s["text"] for s in READING if s is not B)
    assert in_order_recall(others, left) >= 0.8


def test_only_the_words_where_the_other_channel_is_far_louder_are_left_out():
    # 50 ms frames: for 2 s the other channel is 14 dB louder but this one rises to it
    # once (both talking), then the other is 20 dB louder for 1.5 s (its voice leaking
    # in), then silent.
    own = np.full(100, 0.1)
    own[10] = 0.5
    other = np.concatenate([np.full(40, 0.5), np.full(30, 1.0), np.zeros(30)])
    words = (Word(0.2, 0.8, "both"), Word(2.2, 2.9, "leaked"), Word(4.0, 4.5, "alone"))
    segment = Segment(0.2, 4.5, "both leaked alone", words=words)
    wordless = [Segment(2.1, 3.4, "leaked"), Segment(0.5, 1.5, "both")]

    (kept,) = louder_only([segment], own, other)
    assert (kept.start, kept.end, kept.text) == (0.2, 4.5, "both alone")
    assert [w.text for w in kept.words] == ["both", "alone"]
    assert [s.text for s in louder_only(wordless, own, other)] == ["both"]
