"""Renaming a named voice keeps one voice in the library, under the new name.

**Real voices**: the AMI excerpts ``ami_dev00`` and ``ami_dev01`` of
tests/fixtures/real_speech (ES2003a and ES2003b; MEE009 talks in both; source and
licence in their ``.json``), their reference turns as ``.srt`` sidecars so the units'
times are known without speech recognition; CAM++ labels the voices for real.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.voice_library import copy_with_subtitles, person_of, timed_units
from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
from llama_index_video.store.voice_library import VOICES_FILE

NAMES = ("Mee Nine", "Mee Nueve", "M. Nine")  # AMI's MEE009, renamed twice


def opened(path: Path, embed_model) -> VideoIndex:
    reader = VideoReader(
        media_dir=path / "media", diarizer=CampplusDiarizer(num_speakers=2), frames=None, ocr="off"
    )
    return VideoIndex(path, embed_model=embed_model, reader=reader)


def library(index: VideoIndex) -> dict[str, float]:
    """The seconds of speech behind each voice of the index's library."""
    voices = json.loads((index.path / VOICES_FILE).read_text())["voices"]
    return {name: voice["seconds"] for name, voice in voices.items()}


def seconds_named(index: VideoIndex, name: str, *stems: str) -> float:
    """Seconds of the units of ``stems`` that carry ``name``."""
    return sum(e - s for stem in stems for _, who, s, e in timed_units(index, stem) if who == name)


def mee009_named(index: VideoIndex, stem: str, name: str) -> float:
    said = [who for person, who, _, _ in timed_units(index, stem) if person == "MEE009"]
    return said.count(name) / len(said)


@pytest.mark.timeout(900)  # CAM++ on 30 s six times: minutes on a loaded shared machine
def test_renaming_a_named_voice_keeps_one_voice_under_the_new_name(tmp_path, embed_model):
    for stem in ("ami_dev00", "ami_dev01"):
        copy_with_subtitles(stem, tmp_path)
    index = opened(tmp_path / "index", embed_model)
    try:
        assert index.ingest([tmp_path / "ami_dev00.flac"]).ok
        said = [who for person, who, _, _ in timed_units(index, "ami_dev00") if person == "MEE009"]
        index.name_speaker("ami_dev00.flac", max(set(said), key=said.count), NAMES[0])
        assert index.ingest([tmp_path / "ami_dev01.flac"]).ok  # named from the library
        assert mee009_named(index, "ami_dev01", NAMES[0]) >= 0.75

        index.name_speaker("ami_dev01.flac", NAMES[0], NAMES[1])  # a name from the library
        index.name_speaker("ami_dev01.flac", NAMES[1], NAMES[2])  # a name given by hand
        index.name_speaker("ami_dev00.flac", NAMES[0], NAMES[2])
        voices = library(index)
        # one voice, each recording's speech in it once (before: twice, 55.6 s of 27.8)
        assert list(voices) == [NAMES[2]]
        heard = seconds_named(index, NAMES[2], "ami_dev00", "ami_dev01")
        assert voices[NAMES[2]] == pytest.approx(heard, abs=0.05)

        again = tmp_path / "again.wav"  # another recording of the second meeting
        command = [
            "ffmpeg",
            "-nostdin",
            "-loglevel",
            "error",
            "-i",
            str(tmp_path / "ami_dev01.flac"),
        ]
        subprocess.run([*command, str(again)], check=True)
        shutil.copy(tmp_path / "ami_dev01.srt", again.with_suffix(".srt"))
        assert index.ingest([again]).ok
        rows = index.vector_store._collection.get(  # type: ignore[attr-defined]
            where={schema.MODALITY: "transcript"}, include=["metadatas"]
        )
        said = [
            (person_of("ami_dev01", m[schema.START_S], m[schema.END_S]), m.get(schema.SPEAKER))
            for m in rows["metadatas"]
            if m[schema.SOURCE].endswith(again.name)
        ]
        mee009 = [who for person, who in said if person == "MEE009"]
        assert mee009.count(NAMES[2]) >= 0.75 * len(mee009), said
        assert not {NAMES[0], NAMES[1]} & {who for _, who in said}
    finally:
        index.close()
