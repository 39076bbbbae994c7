"""Two voices on two channels are heard one channel at a time, each its own speaker (the
new user's trial, issue 36: a two-speaker stereo file was transcribed from the downmix,
where whoever talked over the other was lost).

Left: the LibriVox reader (``librivox_en.json``: five sentences with their times); right,
talking over it all the way: 30 s of a real AMI meeting, one man speaking from 1.1 s
to the end (``real_speech/ami_trn03.rttm``), brought to the reading's loudness as a
call recorder's two sides are. Both real speech. Mixed to one, tiny.en keeps 0.62 of
the reading's words in order on this machine; each channel alone, 0.97.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.stereo_speakers import in_order_recall
from llama_index_video import schema
from llama_index_video.media.probe import probe
from llama_index_video.reader.channels import two_voices
from llama_index_video.reader.video_reader import VideoReader
from tests.reader.muxed import read_speech, write_mkv
from tests.reader.test_subtitle_coverage import Counting
from tests_support import LIBRIVOX, ROOT

MEETING = ROOT / "tests" / "fixtures" / "real_speech" / "ami_trn03.flac"
READING = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
SAID = " ".join(s["text"] for s in READING)
MEETING_FROM = 1.1  # the meeting's speech, to its end (ami_trn03.rttm)


def _stereo(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    length = max(len(left), len(right))
    return np.stack(
        [np.pad(left, (0, length - len(left))), np.pad(right, (0, length - len(right)))]
    )


@pytest.fixture(scope="module")
def call(tmp_path_factory):
    folder = tmp_path_factory.mktemp("call")
    reading, meeting = read_speech(LIBRIVOX), read_speech(MEETING)
    loudness = np.sqrt(np.square(reading).mean() / np.square(meeting).mean())
    track = _stereo(reading, meeting * loudness)
    return write_mkv(folder / "call.mkv", [track])


def _units(result):
    return [n for n in result.nodes if n.metadata[schema.MODALITY] == "transcript"]


def test_each_channel_is_heard_alone_and_labelled_with_its_speaker(call, transcriber, tmp_path):
    reader = VideoReader(media_dir=tmp_path, transcriber=transcriber, frames=None)

    result = reader.read(call)
    units = _units(result)
    left = [u for u in units if u.metadata.get(schema.SPEAKER) == "SPEAKER_1"]
    right = [u for u in units if u.metadata.get(schema.SPEAKER) == "SPEAKER_2"]

    assert in_order_recall(SAID, " ".join(u.text for u in left)) >= 0.85  # mixed: 0.62
    assert all(u.metadata[schema.START_S] >= READING[0]["start"] - 1.0 for u in left)
    assert all(u.metadata[schema.END_S] <= READING[-1]["end"] + 1.0 for u in left)
    assert right and all(u.metadata[schema.START_S] >= MEETING_FROM - 1.0 for u in right)
    assert len(left) + len(right) == len(units)
    starts = [u.metadata[schema.START_S] for u in units]
    assert starts == sorted(starts)
    (note,) = [n for n in result.notes if "two voices on two channels" in n]
    assert "SPEAKER_1 left, SPEAKER_2 right" in note


def test_one_voice_on_both_channels_is_heard_mixed(tmp_path):
    # The same reading on both channels, 3 ms later and quieter on the right, with hiss:
    # one voice through two microphones.
    reading = read_speech(LIBRIVOX)
    hiss = np.random.default_rng(0).normal(0, 0.003, (2, len(reading) + 48)).astype(np.float32)
    delayed = np.concatenate([np.zeros(48, np.float32), reading]) * 0.6
    track = _stereo(reading + hiss[0, : len(reading)], delayed + hiss[1])
    video = write_mkv(tmp_path / "room.mkv", [track])
    counting = Counting()

    result = VideoReader(media_dir=tmp_path, transcriber=counting, frames=None).read(video)

    assert two_voices(probe(video), track=1) is None
    assert len(counting.given) == 1  # once, mixed
    assert not any("channels" in note for note in result.notes)


def test_a_call_heard_channel_by_channel_is_probed_once(call, tmp_path, probes):
    result = VideoReader(media_dir=tmp_path, transcriber=Counting(), frames=None).read(call)

    assert any("two voices on two channels" in note for note in result.notes)
    assert probes == {call.name: 1}  # not again for each channel's start, loudness, speech


def test_mixing_can_be_asked_for(call, tmp_path):
    assert two_voices(probe(call), track=1) is not None
    counting = Counting()
    reader = VideoReader(
        media_dir=tmp_path, transcriber=counting, frames=None, split_channels=False
    )

    reader.read(call)

    assert len(counting.given) == 1


def test_a_long_call_is_not_spread_over_workers_as_a_downmix(tmp_path):
    # A Ray ingest transcribes speech_chunks on workers: mixed, they would undo the split.
    reading, meeting = read_speech(LIBRIVOX), read_speech(MEETING)
    track = _stereo(np.tile(reading, 2), np.tile(meeting, 2))
    long_call = write_mkv(tmp_path / "long_call.mkv", [track])
    options = {"media_dir": tmp_path, "frames": None, "audio_chunk_seconds": 30}

    assert VideoReader(**options).speech_chunks(long_call) is None
    mixed = VideoReader(**options, split_channels=False).speech_chunks(long_call)
    assert mixed is not None and len(list(mixed)) >= 2


def test_ingest_can_mix_the_channels():
    from llama_index_video.cli.ingest_command import _reader_options
    from llama_index_video.cli.parser import build_parser

    parse = build_parser().parse_args
    assert _reader_options(parse(["ingest", "call.mkv"])).split_channels
    assert not _reader_options(parse(["ingest", "call.mkv", "--mix-channels"])).split_channels
