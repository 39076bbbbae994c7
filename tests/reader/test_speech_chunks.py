"""A recording transcribed chunk by chunk, anywhere, reads as a plain read does.

``speech_chunks`` + ``transcribe_chunk`` + ``read(speech=...)`` is how a Ray ingest spreads
a long file over workers (issue 14); with real speech recognition the nodes must be those
of a plain read, which transcribes the same chunks one after another.
"""

from __future__ import annotations

import itertools
import shutil

import pytest

from llama_index_video.media.audio import SAMPLE_RATE
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Speech
from tests_support import HANDBOOK, OZONE, OZONE_SRT

CHUNK_SECONDS = 30.0  # the ozone video (80 s) becomes 3-4 chunks, cut at quiet moments


def _rows(result):
    return [(node.node_id, node.get_content(), node.metadata) for node in result.nodes]


def test_speech_heard_chunk_by_chunk_gives_the_nodes_of_a_plain_read(tmp_path, transcriber):
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=transcriber,
        ocr="off",
        audio_chunk_seconds=CHUNK_SECONDS,
    )
    chunks = reader.speech_chunks(OZONE)
    assert chunks is not None
    chunks = list(chunks)
    assert len(chunks) in (3, 4)
    assert chunks[0].start == 0.0
    for before, after in itertools.pairwise(chunks):
        assert after.start == pytest.approx(before.end)  # nothing lost, nothing twice
    assert chunks[-1].end == pytest.approx(80.0, abs=0.05)
    assert all(len(chunk.samples) <= CHUNK_SECONDS * SAMPLE_RATE for chunk in chunks)

    # Chunks may be heard in any order (on any worker): each is timed on the source.
    heard = {
        i: reader.transcribe_chunk(chunks[i], source=OZONE) for i in reversed(range(len(chunks)))
    }
    for i, part in heard.items():
        assert part.language == "en"
        for segment in part.segments:
            assert chunks[i].start <= segment.start <= segment.end <= chunks[i].end
    speech = Speech.joined(heard[i] for i in range(len(chunks)))
    starts = [segment.start for segment in speech.segments]
    assert starts == sorted(starts) and len(starts) >= 3

    plain = reader.read(OZONE)
    from_chunks = reader.read(OZONE, speech=speech)
    assert _rows(from_chunks) == _rows(plain)
    assert any(node.metadata["modality"] == "frame" for node in plain.nodes)


def test_files_read_in_one_chunk_or_without_speech_recognition_are_not_split(tmp_path, transcriber):
    reader = VideoReader(
        media_dir=tmp_path / "media", transcriber=transcriber, audio_chunk_seconds=CHUNK_SECONDS
    )
    subtitled = tmp_path / "subtitled"
    subtitled.mkdir()
    shutil.copy(OZONE, subtitled / OZONE.name)
    shutil.copy(OZONE_SRT, subtitled / OZONE_SRT.name)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    assert VideoReader(media_dir=tmp_path / "media").speech_chunks(OZONE) is None  # 80 s < 600 s
    assert reader.speech_chunks(subtitled / OZONE.name) is None
    assert reader.speech_chunks(HANDBOOK) is None
    assert reader.speech_chunks(broken) is None
    assert reader.speech_chunks(tmp_path / "missing.mp4") is None
    with_subtitles_ignored = VideoReader(
        media_dir=tmp_path / "media", use_subtitles=False, audio_chunk_seconds=CHUNK_SECONDS
    )
    assert with_subtitles_ignored.speech_chunks(subtitled / OZONE.name) is not None


def test_joined_speech_keeps_chunk_order_and_the_first_language_heard():
    from llama_index_video.transcription.base import Segment

    first = Speech((Segment(0.0, 1.0, "a"),), None)
    second = Speech((Segment(30.0, 31.0, "b"), Segment(32.0, 33.0, "c")), "en")
    third = Speech((), "de")
    joined = Speech.joined([first, second, third])
    assert [s.text for s in joined.segments] == ["a", "b", "c"]
    assert joined.language == "en"
    assert Speech.joined([]) == Speech()
