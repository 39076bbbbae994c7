"""How a live recording ends: what it kept to resume from is gone once the finished file
is ingested, and a recording stopped with Ctrl-C while it still grows, then followed
again, goes on where it stopped and holds each moment once.

The recording is the tone script of :mod:`test_live` (a fact's second is a known tone),
so every fact's time is known and nothing depends on what speech recognition hears.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from typing import Any

import numpy as np
import pytest
from test_live import RATE, SCRIPT, WAIT_SECONDS, open_index, rows, write_recording

from benchmarks import live_latency
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.media import audio
from llama_index_video.media.audio import AudioChunk

CHUNK_SECONDS = 4.0


def follow(index, recording, **options):
    """``ingest_live`` in 4 s chunks, as the recorder of these tests writes them."""
    return ingest_live(
        index, recording, chunk_seconds=CHUNK_SECONDS, max_seconds=WAIT_SECONDS, **options
    )


def live_notes(index) -> list[str]:
    with closing(sqlite3.connect(index.manifest.db_file)) as manifest:
        found = manifest.execute("SELECT key FROM meta WHERE key LIKE 'live-%'").fetchall()
    return [key for (key,) in found]


def searchable(index) -> list[tuple[str, float, float, str]]:
    """The rows search may return: those of contents listed as complete."""
    stored = rows(index)
    listed = index.manifest.indexed_among({row[0] for row in stored})
    return [row for row in stored if row[0] in listed]


def test_a_finished_recording_leaves_no_notes_to_resume_from(tmp_path, embed_model):
    recording = tmp_path / "meeting.mkv"
    write_recording(recording, SCRIPT, 0.0)
    index = open_index(tmp_path / "index", embed_model)
    noted: list[list[str]] = []
    report = follow(index, recording, settle=0.5, report=lambda c: noted.append(live_notes(index)))
    assert report.ok, report
    assert noted[0], "a chunk stored no notes to resume from"
    assert live_notes(index) == []
    index.close()


class PausedRecorder:
    """Stands in for ``time`` in the recorder of :mod:`benchmarks.live_latency`: it writes
    a second at once, and after the seconds in ``pauses`` waits for the next ``go``."""

    def __init__(self, *pauses: int) -> None:
        self.pauses = list(pauses)
        self.go = [threading.Event() for _ in pauses]
        self.written = 0

    def sleep(self, seconds: float) -> None:
        self.written += 1
        if self.written in self.pauses:
            self.go[self.pauses.index(self.written)].wait(WAIT_SECONDS)


@pytest.mark.parametrize("then", ["grown", "rewritten", "killed"])
def test_a_recording_stopped_while_it_grows_goes_on_where_it_stopped_when_followed_again(
    tmp_path, embed_model, monkeypatch, then
):
    """Ctrl-C (``stop``) ends the recording at 12 s and ingests that much whole; the
    recorder goes on, and ``ingest --live`` of the same file is started again. It goes on
    after what was stopped (not from 0, transcribing it again), whose moments stay
    searchable meanwhile, once each, and are not left behind, with no path naming them,
    once it has ended. A file whose bytes changed since the stop (``rewritten``: one
    byte of its last second, past the first 64 KiB that name the recording) is not the
    one stopped: it is followed from 0, and what was stopped is forgotten. A run going on
    from it that is ``killed`` after its first chunk resumes after that chunk, and what
    was stopped still goes at the end."""
    recording = tmp_path / "meeting.mkv"
    recorder = PausedRecorder(12, 18)
    monkeypatch.setattr(live_latency, "time", recorder)
    script = SCRIPT * 2  # the launch code at 1-3 s and 13-15 s
    tones = np.sin(2 * np.pi * np.repeat(script, RATE) * np.arange(len(script) * RATE) / RATE)
    writer = threading.Thread(target=live_latency.write_samples, args=(recording, 0.5 * tones, 0))
    writer.start()
    index = open_index(tmp_path / "index", embed_model)
    stop = threading.Event()
    report = follow(index, recording, settle=WAIT_SECONDS, stop=stop, report=lambda c: stop.set())
    assert report.ok, report
    (stopped,) = index.library()
    assert stopped.status == "indexed" and stopped.duration
    assert [row[1] for row in searchable(index)] == [pytest.approx(1.0, abs=0.5)]

    if then == "rewritten":
        with recording.open("r+b") as handle:
            handle.seek(-RATE, 2)
            byte = handle.read(1)
            handle.seek(-RATE, 2)
            handle.write(bytes([byte[0] ^ 1]))
    recorder.go[0].set()  # the recorder goes on: 6 s more, then waits again
    found: list[tuple[LiveChunk, list[tuple[str, float, float, str]]]] = []
    decode = audio.decode_audio_span

    def taken(*span: Any) -> AudioChunk:
        """The recorder goes on once a whole chunk is taken, and writes while it is heard
        and stored, as a real one does: released only after, it stood still all that
        time, and a follower slower than ``settle`` took the file for ended."""
        chunk = decode(*span)
        if len(chunk.samples) >= CHUNK_SECONDS * audio.SAMPLE_RATE:
            recorder.go[1].set()
        return chunk

    monkeypatch.setattr(audio, "decode_audio_span", taken)

    def followed(chunk: LiveChunk) -> None:
        found.append((chunk, searchable(index)))
        if then == "killed" and len(found) == 1:
            raise KeyboardInterrupt

    if then == "killed":
        with pytest.raises(KeyboardInterrupt):
            follow(index, recording, settle=1.0, report=followed)
        assert [e.status for e in index.library()] == ["live"]
    report = follow(index, recording, settle=1.0, report=followed)
    writer.join()
    assert report.ok, report
    went_on_from = 0.0 if then == "rewritten" else stopped.duration
    assert found[0][0].start == pytest.approx(went_on_from, abs=0.01)
    assert found[1][0].start == found[0][0].end
    for chunk, shown in found:  # what was stopped, then the chunks after it; each once
        assert [row[1] for row in shown if row[1] < 4.0] == [pytest.approx(1.0, abs=0.5)]
        assert len({row[1:3] for row in shown}) == len(shown), chunk
    assert [e.status for e in index.library()] == ["indexed"]
    assert live_notes(index) == []
    followed_again = rows(index)
    index.close()

    normal = open_index(tmp_path / "normal", embed_model)
    assert normal.ingest([recording]).ok
    assert followed_again == rows(normal)  # nothing of the stopped file is left
    normal.close()
