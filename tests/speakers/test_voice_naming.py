"""A named voice: at phone bandwidth, on a file's second audio track and on a call heard
one channel at a time, the name goes on its own voice.

**Real voices**, public domain and Apache-2.0 (licences in ``benchmarks/long_real/*.json``):
the amateur LibriVox reader (``amateur_reader``) and the LJ Speech reader (``lj_reader``).
The reader is named in a wideband recording of theirs; then a phone bridge's copy (8 kHz
mono MP3, 16 kbit/s) of another stretch of their reading, with the other reader's
sentences after it, is ingested. The diarizer is told there is one speaker, as it does
when it merges voices at 8 kHz: one label holds both readers, and its voice is the named
reader's. Units are the readings' sentences (an ``.srt`` beside each file).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.voice_library import srt_time
from llama_index_video import schema
from llama_index_video.index import VideoIndex
from llama_index_video.media import audio
from llama_index_video.media.probe import probe
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
from llama_index_video.speakers.voices import VOICE_THRESHOLD, heard_labels
from llama_index_video.store.voice_library import VoiceLibrary
from tests_support import ROOT

LONG = ROOT / "benchmarks" / "long_real"
NAME = "Arjun Rao"
Stretch = tuple[str, float, float]  # reader, start, end
PHONE = ("-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "16k")


def write(path: Path, stretches: list[tuple[str, float, float]], *options: str) -> list[Stretch]:
    """The readers' ``(stem, start, end)`` stretches joined into ``path`` with an ``.srt``
    of their sentences; each stretch's reader and seconds in ``path``."""
    inputs, filters, cues, joined = [], [], [], []
    offset = 0.0
    for number, (stem, start, end) in enumerate(stretches):
        inputs += ["-ss", str(start), "-t", str(end - start), "-i", str(LONG / f"{stem}.opus")]
        filters.append(f"[{number}:a]aresample=16000,aformat=channel_layouts=mono[a{number}]")
        for turn in json.loads((LONG / f"{stem}.json").read_text())["turns"]:
            if turn["start"] >= start and turn["end"] <= end:
                a, b = offset + turn["start"] - start, offset + turn["end"] - start
                cues.append(f"{len(cues) + 1}\n{srt_time(a)} --> {srt_time(b)}\n{turn['text']}.\n")
        joined.append((stem, offset, offset + end - start))
        offset += end - start
    inputs_joined = "".join(f"[a{n}]" for n in range(len(stretches)))
    graph = ";".join(filters) + f";{inputs_joined}concat=n={len(stretches)}:v=0:a=1[out]"
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", *inputs, "-filter_complex"]
    subprocess.run([*command, graph, "-map", "[out]", *options, str(path)], check=True)
    path.with_suffix(".srt").write_text("\n".join(cues))
    return joined


def opened(folder: Path, embed_model, *, audio_track: int = 1) -> VideoIndex:
    reader = VideoReader(
        media_dir=folder / "media",
        diarizer=CampplusDiarizer(num_speakers=1),
        frames=None,
        ocr="off",
        audio_track=audio_track,
    )
    return VideoIndex(folder / "index", embed_model=embed_model, reader=reader)


@pytest.fixture
def index(tmp_path, embed_model):
    index = opened(tmp_path, embed_model)
    yield index
    index.close()


def speakers_said(index: VideoIndex, recording: str, stretches: list[Stretch]):
    """Each reader's units of ``recording`` (within one stretch of theirs): their speakers."""
    rows = index.vector_store._collection.get(  # type: ignore[attr-defined]
        where={schema.MODALITY: "transcript"}, include=["metadatas"]
    )
    said: dict[str, list[str]] = {}
    for meta in rows["metadatas"]:
        if meta[schema.SOURCE].endswith(recording):
            for reader, start, end in stretches:
                if start - 0.5 <= meta[schema.START_S] and meta[schema.END_S] <= end + 0.5:
                    said.setdefault(reader, []).append(meta[schema.SPEAKER])
    return said


@pytest.mark.timeout(900)  # about 20 CPU s of CAM++; minutes on a loaded shared machine
def test_a_phone_recording_gives_the_name_to_the_named_voice_not_to_another(index, tmp_path):
    write(tmp_path / "named.flac", [("amateur_reader", 300.0, 345.0)])
    stretches = write(
        tmp_path / "call.mp3",
        [("amateur_reader", 600.0, 690.0), ("lj_reader", 0.0, 20.0)],
        *PHONE,
    )
    assert index.ingest([tmp_path / "named.flac"]).ok
    index.name_speaker("named.flac", "SPEAKER_1", NAME)
    assert index.ingest([tmp_path / "call.mp3"]).ok
    said = speakers_said(index, "call.mp3", stretches)
    named, other = said["amateur_reader"], said["lj_reader"]
    assert NAME not in other, other  # before: every unit of the matched label was named
    assert named.count(NAME) >= 0.8 * len(named), named


@pytest.mark.timeout(900)
def test_a_voice_on_the_audio_track_ingest_heard_is_named(
    index, tmp_path, embed_model, monkeypatch
):
    """A film's second track (a commentary, heard with ``audio_track=2``) holds the named
    reader, the first another voice. Before, naming heard the first track: nothing named
    (and probed the duration ingest had stored)."""
    write(tmp_path / "named.flac", [("amateur_reader", 300.0, 345.0)])
    assert index.ingest([tmp_path / "named.flac"]).ok
    probed = []
    monkeypatch.setattr(audio, "probe", lambda path: probed.append(path) or probe(path))
    index.name_speaker("named.flac", "SPEAKER_1", NAME)
    monkeypatch.undo()
    index.close()
    first = write(tmp_path / "first.flac", [("lj_reader", 0.0, 60.0)])
    second = write(tmp_path / "second.flac", [("amateur_reader", 600.0, 660.0)])
    film = tmp_path / "film.mkv"
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y"]
    inputs = ["-i", str(tmp_path / "first.flac"), "-i", str(tmp_path / "second.flac")]
    tracks = ["-map", "0:a", "-map", "1:a", "-c:a", "flac", str(film)]
    subprocess.run([*command, *inputs, *tracks], check=True)
    film.with_suffix(".srt").write_text((tmp_path / "second.srt").read_text())
    commentary = opened(tmp_path, embed_model, audio_track=2)
    try:
        assert commentary.ingest([film]).ok
        named = speakers_said(commentary, "film.mkv", second)["amateur_reader"]
    finally:
        commentary.close()
    assert first[0][2] == second[0][2] == 60.0
    assert named.count(NAME) >= 0.8 * len(named), named
    assert not probed


def stereo(path: Path, left: Path, right: Path) -> Path:
    """``left`` and ``right`` (mono) as the two channels of ``path``, no sidecar."""
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(left), "-i", str(right)]
    joined = ["-filter_complex", "[0:a][1:a]join=inputs=2:channel_layout=stereo[a]"]
    subprocess.run([*command, *joined, "-map", "[a]", "-c:a", "flac", str(path)], check=True)
    return path


def stored_speakers(index: VideoIndex, recording: str) -> dict[str, str]:
    """Each transcript unit of ``recording`` (its id): its speaker."""
    rows = index.vector_store._collection.get(  # type: ignore[attr-defined]
        where={schema.MODALITY: "transcript"}, include=["metadatas"]
    )
    return {
        row: meta[schema.SPEAKER]
        for row, meta in zip(rows["ids"], rows["metadatas"], strict=True)
        if meta[schema.SOURCE].endswith(recording)
    }


@pytest.mark.timeout(900)  # tiny.en on two 40 s channels and CAM++: minutes when loaded
def test_a_call_heard_by_channel_is_named_from_the_channel_each_voice_was_heard_on(index, tmp_path):
    """A call recorder's stereo: the LJ Speech reader left, the named reader right, both
    reading all the way through (ingest hears each channel alone: SPEAKER_1 left,
    SPEAKER_2 right). Before, naming heard the mix of both: the right voice's print was
    0.54 from the named reader's (0.98 on its channel) and nothing was named."""
    write(tmp_path / "named.flac", [("amateur_reader", 300.0, 325.0)])
    write(tmp_path / "left.flac", [("lj_reader", 0.0, 20.0)])
    write(tmp_path / "right.flac", [("amateur_reader", 600.0, 620.0)])
    call = stereo(tmp_path / "call.flac", tmp_path / "left.flac", tmp_path / "right.flac")
    assert index.ingest([tmp_path / "named.flac", call]).ok
    heard = stored_speakers(index, "call.flac")
    assert set(heard.values()) == {"SPEAKER_1", "SPEAKER_2"}

    index.name_speaker("named.flac", "SPEAKER_1", NAME)
    index.relabel_speakers(["call.flac"])
    named = stored_speakers(index, "call.flac")
    right = [named[unit] for unit, label in heard.items() if label == "SPEAKER_2"]
    left = [named[unit] for unit, label in heard.items() if label == "SPEAKER_1"]
    assert right.count(NAME) >= 0.8 * len(right), right
    assert NAME not in left, left

    # naming on the call keeps the voice of the channel it was heard on
    index.name_speaker("call.flac", "SPEAKER_1", "Linda Johnson")
    library = VoiceLibrary(index.path).centroids()
    alone = heard_labels(tmp_path / "left.flac", {"lj": [(0.0, 20.0)]})
    assert float(library["Linda Johnson"] @ alone["lj"].voice) >= 0.9
    assert float(library["Linda Johnson"] @ library[NAME]) < VOICE_THRESHOLD
