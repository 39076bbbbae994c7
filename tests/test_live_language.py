"""``ingest --live`` hears each chunk in the language the recording was heard in so far,
unless the chunk is decisively in another (:mod:`.transcription.recording_language`).

The recording is real speech written into a growing Matroska file: 10 s of an AMI meeting
(English), the first 10 s of another, which the language head alone hears as French at
0.2 and writing down does not find English, then 10 s of a Spanish FLEURS reading; heard
by the real transcriber (tiny.en, ``base`` for what is not English), 10 s per chunk.
The recording's language is kept across a restart of the command.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import numpy as np

from benchmarks.live_latency import write_samples
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio
from tests_support import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
CHUNK_SECONDS = 10.0
WAIT_SECONDS = 120.0
UNREAD_SECONDS = 2.0
"""The last seconds written by :func:`write_samples` that cannot be read back until more
follow, or the file is closed (measured)."""


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


class HeldBack:
    """Samples a writer reads a second at a time (:func:`write_samples`), held back at
    ``at`` seconds until ``go`` is set: a recording that stops growing for a while."""

    def __init__(self, samples: np.ndarray, at: float, go: threading.Event) -> None:
        self.samples, self.at, self.go = samples, round(at * SAMPLE_RATE), go

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, span: slice) -> np.ndarray:
        if span.start >= self.at:
            self.go.wait(WAIT_SECONDS)
        return self.samples[span]


def lines_until(process: subprocess.Popen, start: str) -> list[str]:
    """``process``'s lines up to the first beginning with ``start`` (all, if it ends)."""
    read: list[str] = []
    for line in process.stdout:  # type: ignore[union-attr]
        read.append(line)
        if line.startswith(start):
            break
    return read


def stop_twice(process: subprocess.Popen) -> None:
    """Ctrl-C twice: the first asks to stop after the ingest under way, the second stops
    at once, as a crash would (the run resumes when started again)."""
    process.send_signal(signal.SIGINT)
    assert lines_until(process, "stopping")[-1].startswith("stopping")
    process.send_signal(signal.SIGINT)
    process.wait(timeout=WAIT_SECONDS)


def test_a_live_ingest_stopped_and_started_again_keeps_the_recordings_language(
    tmp_path, embed_model
):
    """The recording is English for 10 s, then stops growing; ``ingest --live`` stores that
    chunk and is stopped with Ctrl-C (twice: at once). The recording goes on with the 10 s
    of ``ami_trn05`` heard alone as French, and the command is started again: it resumes
    at 10 s and hears them in English. An index written before the language was kept
    (no ``live-language`` note) resumes there too, and finishes."""
    from llama_index_video.index import VideoIndex

    size = round(CHUNK_SECONDS * SAMPLE_RATE)
    samples = np.concatenate(
        [
            decode_audio(FIXTURES / "real_speech" / "ami_trn06.flac")[-size:],
            decode_audio(FIXTURES / "real_speech" / "ami_trn05.flac")[:size],
        ]
    )
    recording = tmp_path / "meeting.mkv"
    folder, old_format = tmp_path / "index", tmp_path / "old-format-index"
    go = threading.Event()
    held = HeldBack(samples, CHUNK_SECONDS + UNREAD_SECONDS, go)  # 10 s readable
    writer = threading.Thread(target=write_samples, args=(recording, held, 0.1))
    command = [sys.executable, "-m", "llama_index_video.cli.main", "ingest", "--live"]
    command += [str(recording), "--chunk-seconds", f"{CHUNK_SECONDS:g}", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(index: Path, settle: float) -> subprocess.Popen:
        return subprocess.Popen(
            [*command, "--index", str(index), "--live-settle", f"{settle:g}"],
            stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip

    writer.start()
    first = run(folder, 60)
    try:
        assert lines_until(first, "live ")[-1].startswith(f"{'live':8} 0-10 s")
        stop_twice(first)
    finally:
        go.set()
        first.kill()
        writer.join()
    shutil.copytree(folder, old_format)
    with closing(sqlite3.connect(old_format / "manifest.sqlite")) as manifest, manifest:
        assert manifest.execute("DELETE FROM meta WHERE key LIKE 'live-language:%'").rowcount
    again, old = run(folder, 60), run(old_format, 1)
    try:
        assert lines_until(again, "live ")[-1].startswith(f"{'live':8} 10-20 s")
        stop_twice(again)
        finished = old.communicate(timeout=WAIT_SECONDS * 3)[0]
    finally:
        again.kill()
        old.kill()
    index = VideoIndex(folder, embed_model=embed_model)
    stored = index.vector_store.client.get(include=["metadatas"])["metadatas"]
    index.close()
    heard = {m["language"] for m in stored if m["modality"] == "transcript" and m["start_s"] >= 10}
    assert heard == {"en"}  # alone: French
    assert old.returncode == 0, finished
    resumed = [line for line in finished.splitlines() if line.startswith("live ")]
    assert len(resumed) == 1 and resumed[0].startswith(f"{'live':8} 10-20 s"), finished
    index = VideoIndex(old_format, embed_model=embed_model)
    assert [e.status for e in index.library()] == ["indexed"]
    index.close()
