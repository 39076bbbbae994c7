"""``ingest --live``: a recording written in real time by a thread is searchable while it
grows, resumes after a kill without duplicates, and ends as a normal ingest of the file.

The recording is Matroska audio written with PyAV, one second of tone per second of wall
time. Its "speech" is heard by :class:`ToneTranscriber`, which names each second by the
tone in it, so the times of every fact are known and no test depends on what speech
recognition hears on this CPU.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from benchmarks.live_latency import write_samples
from llama_index_video import live
from llama_index_video.cli.main import main
from llama_index_video.errors import MediaError
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.media.audio import decode_audio
from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo
from tests_support import LIBRIVOX, ROOT

RATE = 16_000
FACTS = {440: "the launch code is orange", 660: "lunch moves to the roof garden"}
"""Tone (Hz) -> what a second of it says; other seconds are silent."""
SCRIPT = [0, 440, 440, 0, 0, 0, 0, 660, 660, 0, 0, 0]
"""The tone of each second of the recording."""
WAIT_SECONDS = 120.0


class ToneTranscriber:
    """Hears FACTS: each second of a known tone is one segment saying its fact, of
    ``length`` seconds (another length stands for a run that hears times differently)."""

    name = "tones"

    def __init__(self, length: float = 1.0) -> None:
        self.length = length

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        segments = []
        for second in range(len(audio) // RATE):
            block = audio[second * RATE : (second + 1) * RATE]
            if np.sqrt(np.mean(np.square(block))) < 0.2:  # a full tone's is 0.35
                continue  # silent, or a tone's tail (AAC sounds ~0.06 s late)
            tone = int(np.argmax(np.abs(np.fft.rfft(block))))  # 1 Hz per bin over a second
            fact = next((text for hz, text in FACTS.items() if abs(hz - tone) < 20), None)
            if fact:
                segments.append(Segment(float(second), second + self.length, f" {fact}."))
        info = TranscriptionInfo(
            backend=self.name, model="tones", language="en", duration=len(audio) / RATE
        )
        return Transcription(info=info, segments=iter(segments))


def write_recording(path: Path, seconds: list[int], pace: float) -> None:
    """Matroska audio of ``seconds`` (a tone per second), one second every ``pace`` s."""
    t = np.arange(len(seconds) * RATE) / RATE
    hz = np.repeat(seconds, RATE)
    write_samples(path, (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32), pace)


def open_index(folder: Path, embed_model, transcriber: ToneTranscriber | None = None, **options):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    return VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(
            media_dir=folder / "media", frames=None, transcriber=transcriber or ToneTranscriber()
        ),
        **options,
    )


def rows(index) -> list[tuple[str, float, float, str]]:
    got = index.vector_store.client.get(include=["metadatas", "documents"])
    return sorted(
        (m["content_hash"], m["start_s"], m["end_s"], d)
        for m, d in zip(got["metadatas"], got["documents"], strict=True)
    )


def test_a_growing_recording_is_searchable_while_written_and_ends_as_a_normal_ingest(
    tmp_path, embed_model
):
    recording = tmp_path / "meeting.mkv"
    index = open_index(tmp_path / "index", embed_model)
    writer = threading.Thread(target=write_recording, args=(recording, SCRIPT, 1.0))
    found_early: list[tuple[float, str]] = []

    def search_while_growing(chunk: LiveChunk) -> None:
        if found_early or chunk.end > 8:
            return
        hits = index.search("what is the launch code", top_k=1)
        statuses = {e.status for e in index.library()}
        found_early.extend((h.start, s) for h in hits for s in statuses)

    writer.start()
    report = ingest_live(
        index, recording, chunk_seconds=4.0, settle=5.0, max_seconds=WAIT_SECONDS,
        report=search_while_growing,
    )  # fmt: skip
    writer.join()
    assert report.ok, report
    assert found_early, "no search result while the recording grew"
    start, status = found_early[0]
    assert abs(start - 1.0) <= 0.5 and status == "live"
    assert {e.status for e in index.library()} == {"indexed"}
    live_rows = rows(index)
    index.close()

    normal = open_index(tmp_path / "normal", embed_model)
    assert normal.ingest([recording]).ok
    assert [r[1:] for r in live_rows] == [r[1:] for r in rows(normal)]
    assert {r[0] for r in live_rows} == {r[0] for r in rows(normal)}
    normal.close()


def test_a_recording_that_stops_before_its_first_audio_can_be_read_names_the_setting(
    tmp_path, embed_model
):
    """Matroska holds back its first cluster: after one second is written the file is
    its header alone (412 bytes), which no reader can open. A recorder that stalls
    there for longer than ``settle`` gets one line saying what to change."""
    import av

    recording = tmp_path / "meeting.mkv"
    options = {"flush_packets": "1", "cluster_time_limit": "1000", "live": "1"}
    index = open_index(tmp_path / "index", embed_model)
    with av.open(str(recording), "w", format="matroska", container_options=options) as muxer:
        stream = muxer.add_stream("pcm_s16le", rate=RATE, layout="mono")
        frame = av.AudioFrame.from_ndarray(np.zeros((1, RATE), np.int16), layout="mono")
        frame.rate, frame.pts = RATE, 0
        for packet in stream.encode(frame):
            muxer.mux(packet)
        with pytest.raises(live.MediaError, match="give it a longer --live-settle") as caught:
            ingest_live(index, recording, chunk_seconds=4.0, settle=0.5, max_seconds=30.0)
    index.close()
    assert str(caught.value).startswith(f"{recording}: ")
    assert "\n" not in str(caught.value)


def test_a_recorder_that_writes_its_first_block_after_the_settle_time_is_followed(
    tmp_path, embed_model
):
    """ffmpeg writes an MP3 in 256 KiB blocks, so its file stays empty for 21 s at
    96 kbit/s: longer than the settle time that ends a recording, which used to refuse
    it ("still empty after 10 s"). A file still empty waits up to UNKNOWN_PACE_SECONDS."""
    recording = tmp_path / "meeting.mkv"
    recording.touch()
    settle = 3.0
    index = open_index(tmp_path / "index", embed_model)

    def late_recorder() -> None:
        time.sleep(settle + 1.0)
        write_recording(recording, SCRIPT, 0.0)

    writer = threading.Thread(target=late_recorder)
    writer.start()
    report = ingest_live(index, recording, chunk_seconds=4.0, settle=settle, max_seconds=60.0)
    writer.join()
    assert report.ok, report
    hits = index.search("what is the launch code", top_k=1)
    index.close()
    assert hits and abs(hits[0].start - 1.0) <= 0.5


def test_an_empty_recording_waits_as_long_as_a_block_takes(tmp_path, embed_model, monkeypatch):
    """ffmpeg writes Opus at 32 kbit/s in Ogg or Matroska in 256 KiB blocks 65 s apart,
    the first one too: an empty file was refused after 60 s ("still empty after 60 s",
    a new user's trial), a minute before its first block came. An empty file waits
    UNKNOWN_PACE_SECONDS for the first block, then is refused."""
    recording = tmp_path / "meeting.ogg"
    recording.touch()
    monkeypatch.setattr(live, "UNKNOWN_PACE_SECONDS", 2.0)  # the real 524 s, in a test's time
    index = open_index(tmp_path / "index", embed_model)
    started = time.monotonic()
    with pytest.raises(MediaError, match="still empty after"):
        ingest_live(index, recording, settle=0.5, max_seconds=30.0)
    waited = time.monotonic() - started
    index.close()
    assert 2.0 <= waited < 10.0


def test_a_recorder_that_writes_whole_blocks_a_while_apart_is_followed_to_its_end(
    tmp_path, embed_model, monkeypatch
):
    """ffmpeg writes Matroska and MP3 in 256 KiB blocks: an Opus recording at 32 kbit/s
    grows once a minute, so the settle time (10 s) ended it after its second block and
    the final ingest failed on the unfinished file ("has no duration"; a new user's
    trial). A file of whole blocks waits BLOCK_SECONDS for the next one."""
    whole = tmp_path / "whole.mkv"
    write_recording(whole, SCRIPT, 0.0)
    data = whole.read_bytes()
    first = len(data) // 2 // live.BLOCK_BYTES * live.BLOCK_BYTES  # 6 s of 12
    assert first and len(data) % live.BLOCK_BYTES
    recording = tmp_path / "meeting.mkv"
    recording.write_bytes(data[:first])
    settle = 1.0
    monkeypatch.setattr(live, "BLOCK_SECONDS", 60.0)
    index = open_index(tmp_path / "index", embed_model)
    stored = threading.Event()

    def recorder() -> None:
        stored.wait(WAIT_SECONDS)
        time.sleep(3 * settle)  # the follower has waited out its settle time meanwhile
        with recording.open("ab") as handle:
            handle.write(data[first:])

    writer = threading.Thread(target=recorder)
    writer.start()
    report = ingest_live(
        index, recording, chunk_seconds=4.0, settle=settle, max_seconds=WAIT_SECONDS,
        report=lambda chunk: stored.set(),
    )  # fmt: skip
    writer.join()
    assert report.ok, report
    hits = index.search("where does lunch move to", top_k=1)
    index.close()
    assert hits and abs(hits[0].start - 7.0) <= 0.5


def test_a_killed_live_ingest_resumes_after_its_last_chunk_without_duplicates(
    tmp_path, embed_model, monkeypatch
):
    recording = tmp_path / "meeting.mkv"
    write_recording(recording, SCRIPT, 0.0)
    folder = tmp_path / "index"
    # The killed run hears each fact 0.9 s long, so the rows it leaves are not the ones
    # the next run writes: only deleting them keeps every moment once.
    # its writes' lexical store is patched: the one the folder is written through
    index = open_index(folder, embed_model, ToneTranscriber(length=0.9), snapshot_reads=False)
    words_added = index.lexical.add

    def killed_after_rows(nodes):  # the chunk 8-12 s is in the vector store, not counted
        if any(node.metadata["start_s"] >= 8 for node in nodes):
            raise KeyboardInterrupt
        words_added(nodes)

    monkeypatch.setattr(index.lexical, "add", killed_after_rows)
    monkeypatch.setattr(live, "CATCH_UP_SECONDS", 4.0)  # 4 s chunks, as when keeping up
    with pytest.raises(KeyboardInterrupt):
        ingest_live(index, recording, chunk_seconds=4.0, settle=30.0, max_seconds=WAIT_SECONDS)
    assert [e.status for e in index.library()] == ["live"]
    assert (8.0, 8.9) in [r[1:3] for r in rows(index)]
    index.close()
    index = open_index(folder, embed_model)
    seen: list[tuple[LiveChunk, list, int]] = []
    report = ingest_live(
        index, recording, chunk_seconds=4.0, settle=0.5, max_seconds=WAIT_SECONDS,
        report=lambda chunk: seen.append((chunk, rows(index), index.manifest.indexed_node_total())),
    )  # fmt: skip
    assert report.ok, report
    chunk, live_rows, listed = seen[0]
    assert chunk.start == pytest.approx(8.0, abs=0.01)  # chunks 0-4 and 4-8 were kept
    # each second once (the first two chunks as the killed run heard them); the fact at
    # 7-9 s is cut by the seam at 8 s until the final ingest
    assert [r[1:3] for r in live_rows] == [(1.0, 2.9), (7.0, 7.9), (8.0, 9.0)]
    assert listed == len(live_rows)
    assert index.manifest.indexed_node_total() == len(rows(index)) > 0
    index.close()


def test_a_follower_that_is_behind_takes_up_to_30_s_at_once(tmp_path, embed_model):
    """A recording already 40 s long when the follower starts (as when a busy machine
    fell behind): 30 s in one chunk (one Whisper window), then the rest, not ten 4 s
    chunks."""
    recording = tmp_path / "meeting.mkv"
    write_recording(recording, SCRIPT * 3 + SCRIPT[:4], 0.0)
    index = open_index(tmp_path / "index", embed_model)
    chunks: list[LiveChunk] = []
    report = ingest_live(
        index, recording, chunk_seconds=4.0, settle=0.5, max_seconds=WAIT_SECONDS,
        report=chunks.append,
    )  # fmt: skip
    index.close()
    assert report.ok, report
    assert [(c.start, c.end) for c in chunks] == [(0.0, 30.0), (30.0, 40.0)]


def said_near(start: float, said: float, tolerance: float) -> bool:
    """``start`` is within ``tolerance`` of ``said`` in one of the two LibriVox readings."""
    length = len(decode_audio(LIBRIVOX)) / RATE
    return any(abs(start - said - n * length) <= tolerance for n in (0, 1))


def test_the_command_killed_with_sigkill_mid_recording_resumes_on_real_speech(
    tmp_path, embed_model
):
    """Human speech (the LibriVox clip, twice: 49 s) written at twice real time; ``ingest
    --live`` is killed with SIGKILL once a chunk (at most 30 s) is searchable, started
    again, and finishes alone."""
    from llama_index_video.index import VideoIndex

    facts = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
    samples = np.tile(decode_audio(LIBRIVOX), 2)  # > 30 s: a chunk is left for the restart
    recording = tmp_path / "reading.mkv"
    folder = tmp_path / "index"
    writer = threading.Thread(target=write_samples, args=(recording, samples, 0.5))
    command = [sys.executable, "-m", "llama_index_video.cli.main", "ingest", "--live"]
    command += [str(recording), "--index", str(folder), "--chunk-seconds", "6", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer.start()
    first = subprocess.Popen(
        [*command, "--live-settle", "60"], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        lines = iter(first.stdout)  # type: ignore[arg-type]
        assert next(lines).startswith("following ")
        assert next(lines).startswith("live     0-")  # 6 s or more
        index = VideoIndex(folder, embed_model=embed_model)
        hits = index.search("mister john dashwood had leisure to consider", top_k=1)
        statuses = [e.status for e in index.library()]
        index.close()
        first.send_signal(signal.SIGKILL)  # wherever it is in the next chunk
        first.wait(timeout=WAIT_SECONDS)
    finally:
        first.kill()
    assert statuses == ["live"]
    assert hits and said_near(hits[0].start, facts[0]["start"], 2.0)
    writer.join()
    second = subprocess.run(
        [*command, "--live-settle", "1"], capture_output=True, text=True, env=env,
        timeout=WAIT_SECONDS * 3,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    live_lines = [line for line in second.stdout.splitlines() if line.startswith("live ")]
    assert live_lines and not live_lines[0].startswith("live     0-")  # resumed, not redone
    index = VideoIndex(folder, embed_model=embed_model)
    final = rows(index)
    entries = index.library()
    hits = index.search("he might even have been made amiable himself", top_k=1)
    index.close()
    assert [e.status for e in entries] == ["indexed"]
    assert {r[0] for r in final} == {entries[0].content_hash}
    assert len({r[1:3] for r in final}) == len(final)  # no moment twice
    assert hits and said_near(hits[0].start, facts[-1]["start"], 6.0)


def test_the_command_refuses_several_files_and_a_missing_one_in_one_line(tmp_path, capsys, caplog):
    (tmp_path / "empty.mkv").touch()  # a recorder that has written nothing yet
    options = ["--index", str(tmp_path / "index"), "--live-settle", "0.5", "--quiet"]
    for paths, reason in (
        (["a.mkv", "b.mkv"], "ingest --live takes one file being recorded"),
        ([str(tmp_path / "nowhere.mkv")], "nowhere.mkv: file not found"),
        # an empty file waits BLOCK_SECONDS, unless --max-hours ends it first
        ([str(tmp_path / "empty.mkv"), "--max-hours", "0.0005"], "empty.mkv: still empty after"),
    ):
        caplog.clear()
        code = main(["ingest", "--live", *paths, *options])
        err = capsys.readouterr().err
        assert code != 0
        assert reason in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
        # in a process of its own a warning logged would be a line of its stderr
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
