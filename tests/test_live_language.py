"""``ingest --live`` hears each chunk in the language the recording was heard in so far,
unless the chunk is decisively in another (:mod:`.transcription.recording_language`).

The recording is real speech written into a growing Matroska file: 10 s of an AMI meeting
(English), the first 10 s of another, which the language head alone hears as French at
0.2 and writing down does not find English, then 10 s of a Spanish FLEURS reading; heard
by the real transcriber (tiny.en, ``base`` for what is not English), 10 s per chunk.
"""

from __future__ import annotations

import threading

import numpy as np

from benchmarks.live_latency import write_samples
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio
from tests_support import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
CHUNK_SECONDS = 10.0


def test_a_chunk_misheard_alone_keeps_the_recordings_language_and_a_new_language_switches(
    tmp_path, embed_model, transcriber
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    size = round(CHUNK_SECONDS * SAMPLE_RATE)
    samples = np.concatenate(
        [
            decode_audio(FIXTURES / "real_speech" / "ami_trn06.flac")[-size:],
            decode_audio(FIXTURES / "real_speech" / "ami_trn05.flac")[:size],
            decode_audio(FIXTURES / "real_languages" / "es_fleurs.ogg")[:size],
        ]
    )
    recording = tmp_path / "meeting.mkv"
    index = VideoIndex(
        tmp_path / "index",
        embed_model=embed_model,
        reader=VideoReader(media_dir=tmp_path / "media", frames=None, transcriber=transcriber),
    )
    heard: dict[int, set[str]] = {}

    def languages_stored(chunk: LiveChunk) -> None:
        stored = index.vector_store.client.get(include=["metadatas"])["metadatas"]
        heard[round(chunk.start)] = {
            m["language"]
            for m in stored
            if m["modality"] == "transcript" and chunk.start <= m["start_s"] < chunk.end
        }

    writer = threading.Thread(target=write_samples, args=(recording, samples, 0.1))
    writer.start()
    report = ingest_live(
        index, recording, chunk_seconds=CHUNK_SECONDS, catch_up_seconds=0, settle=5.0,
        max_seconds=300.0, report=languages_stored,
    )  # fmt: skip
    writer.join()
    index.close()
    assert report.ok, report
    assert heard[10] == {"en"}, heard  # alone: French
    assert heard[20] == {"es"}, heard
