"""``ingest --live URL``: an HLS stream served from loopback, its playlist growing as the
test records, is searchable while it plays, survives ``kill -9``, and ends as a normal
ingest of its copy in the index folder.

The stream is written by PyAV's HLS muxer (AAC in MPEG-TS segments of 2 s, an ``EVENT``
playlist that keeps every segment) at a set pace, and served by ``http.server`` in a
thread. The tone recordings are heard by :class:`tests.test_live.ToneTranscriber`, so
every fact's time is known; the ``kill -9`` test streams real human speech (LibriVox)
through the command and its default speech model.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import av
import numpy as np
import pytest

from benchmarks.live_latency import serve_folder, write_hls
from llama_index_video.errors import DownloadError
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.sources.stream import record_stream, stream_copy_name
from tests.test_live import RATE, WAIT_SECONDS, ToneTranscriber, open_index, rows, said_near
from tests_support import LIBRIVOX, ROOT

SCRIPT = [0, 440, 440, *[0] * 10, 660, 660, 0, 0, 0]
"""The tone of each second streamed: the facts of tests/test_live.py at 1 s and 13 s,
10 s apart, so that they are never joined into one moment (units end at a silence of
8 s)."""


def tones(script: list[int]) -> np.ndarray:
    t = np.arange(len(script) * RATE) / RATE
    return (0.5 * np.sin(2 * np.pi * np.repeat(script, RATE) * t)).astype(np.float32)


@contextmanager
def serving(folder: Path, samples: np.ndarray, pace: float, **options) -> Iterator[str]:
    """The HLS recording of ``samples`` served from loopback while it is written; yields
    the playlist's URL once it exists."""
    folder.mkdir()
    server = serve_folder(folder)
    writer = threading.Thread(target=write_hls, args=(folder, samples, pace), kwargs=options)
    writer.start()
    deadline = time.monotonic() + WAIT_SECONDS
    while not (folder / "live.m3u8").exists():
        assert time.monotonic() < deadline, "the playlist never appeared"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/live.m3u8?token=secret"
    finally:
        writer.join(timeout=WAIT_SECONDS)
        server.shutdown()
        server.server_close()


def test_a_live_hls_stream_is_searchable_while_it_plays_and_ends_as_a_normal_ingest(
    tmp_path, embed_model
):
    index = open_index(tmp_path / "index", embed_model)
    found_early: list[tuple[float, str]] = []

    def search_while_playing(chunk: LiveChunk) -> None:
        if found_early or chunk.end > 8:
            return
        hits = index.search("what is the launch code", top_k=1)
        found_early.extend((h.start, e.status) for h in hits for e in index.library())

    with serving(tmp_path / "hls", tones(SCRIPT), 1.0) as url:
        report = ingest_live(
            index, url, chunk_seconds=4.0, settle=5.0, max_seconds=WAIT_SECONDS,
            report=search_while_playing,
        )  # fmt: skip
    assert report.ok, report
    assert found_early, "no search result while the stream played"
    start, status = found_early[0]
    assert abs(start - 1.0) <= 0.5 and status == "live"
    (entry,) = index.library()
    assert entry.status == "indexed" and entry.source == url.removesuffix("?token=secret")
    (copy,) = index.folder.downloads.glob("*.mkv")  # listed by its URL, kept as this file
    assert copy.name.startswith("127.0.0.1-") and "secret" not in copy.name
    origin = json.loads(copy.with_name(copy.stem + ".origin.json").read_text())
    assert origin["url"] == entry.source
    hits = index.search("where does lunch move", top_k=1)
    assert hits and abs(hits[0].start - 13.0) <= 0.5
    live_rows = rows(index)
    index.close()
    normal = open_index(tmp_path / "normal", embed_model)
    assert normal.ingest([copy]).ok
    assert live_rows == rows(normal)
    normal.close()


def test_a_live_video_stream_stores_each_chunks_frames_and_screen_text_as_it_arrives(
    tmp_path, embed_model
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    def open_video_index(folder: Path) -> VideoIndex:
        reader = VideoReader(
            media_dir=folder / "media", transcriber=ToneTranscriber(), ocr="rapidocr"
        )
        return VideoIndex(folder, embed_model=embed_model, reader=reader)

    index = open_video_index(tmp_path / "index")
    while_live: list[tuple[LiveChunk, list, list]] = []

    def look(chunk: LiveChunk) -> None:
        if chunk.end <= 12:
            hits = index.search("launch code orange", top_k=3, modalities=["ocr"])
            frames = index.vector_store.client.get(where={"modality": "frame"})["ids"]
            shown = [(h.start, h.end, h.frame_path and Path(h.frame_path).is_file()) for h in hits]
            while_live.append((chunk, shown, frames))

    with serving(tmp_path / "hls", tones(SCRIPT), 1.0, video=True) as url:
        report = ingest_live(
            index, url, chunk_seconds=4.0, settle=5.0, max_seconds=WAIT_SECONDS, report=look
        )
    assert report.ok, report
    first, hits, frames = while_live[0]
    assert first.start == 0.0  # 4 s or more (what had arrived)
    assert frames and hits and all(0.0 <= start < end <= first.end for start, end, _ in hits)
    assert hits[0][2]  # the frame it was read from, stored with the chunk
    _, later, _ = while_live[-1]  # the slide changes at 8 s: read where it was shown only
    assert all(start < 8.0 for start, _, _ in later)
    hits = index.search("lunch on the roof", top_k=1, modalities=["ocr"])
    assert hits and abs(hits[0].start - 8.0) <= 0.5
    (copy,) = index.folder.downloads.glob("*.mkv")
    live_rows = rows(index)
    index.close()
    normal = open_video_index(tmp_path / "normal")
    assert normal.ingest([copy]).ok
    assert live_rows == rows(normal)
    normal.close()


def test_a_stream_that_cannot_be_replayed_is_appended_after_a_restart(tmp_path):
    """An MP3 served over HTTP plays from its start at each connection, like an Icecast
    stream from "now": the second recording follows the first one's packets."""
    samples = tones([440] * 3)
    song = tmp_path / "radio.mp3"
    with av.open(str(song), "w") as container:
        stream = container.add_stream("libmp3lame", rate=RATE, layout="mono")
        pcm = (samples * 32767).astype(np.int16).reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.rate, frame.pts = RATE, 0
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    server = serve_folder(tmp_path)
    url = f"http://127.0.0.1:{server.server_address[1]}/radio.mp3"
    copy = tmp_path / "copy" / stream_copy_name(url, "20261206-0930")
    try:
        lengths = [
            record_stream(
                url, copy, idle=5.0, deadline=time.monotonic() + WAIT_SECONDS,
                max_bytes=None, stop=threading.Event(),
            ).seconds
            for _ in range(2)
        ]  # fmt: skip
        with pytest.raises(DownloadError, match=r"/nowhere\.m3u8: cannot open the stream"):
            record_stream(
                url.replace("radio.mp3", "nowhere.m3u8"), copy, idle=5.0,
                deadline=time.monotonic() + WAIT_SECONDS, max_bytes=None, stop=threading.Event(),
            )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert copy.name.startswith("127.0.0.1-") and copy.name.endswith("-radio.mp3-20261206-0930.mkv")
    with av.open(str(copy)) as container:
        heard = sum(frame.samples for frame in container.decode(audio=0)) / RATE
    assert lengths[1] == pytest.approx(2 * lengths[0], abs=0.2)
    assert heard == pytest.approx(6.0, abs=0.3)


def test_the_command_killed_with_sigkill_mid_stream_resumes_without_duplicates(
    tmp_path, embed_model
):
    """Human speech (the LibriVox clip, twice: 49 s) streamed as HLS at twice real time;
    ``ingest --live URL`` is killed with SIGKILL once a chunk is stored, started again, and
    finishes the same recording: one copy, each moment once, both ends searchable."""
    from llama_index_video.index import VideoIndex
    from llama_index_video.media.audio import decode_audio

    facts = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
    folder = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    speech = np.tile(decode_audio(LIBRIVOX), 2)  # > 30 s: a chunk is left for the restart
    with serving(tmp_path / "hls", speech, 0.5) as url:
        command = [sys.executable, "-m", "llama_index_video.cli.main", "ingest", "--live", url]
        command += ["--index", str(folder), "--chunk-seconds", "6", "--live-settle", "5"]
        first = subprocess.Popen([*command, "--quiet"], stdout=subprocess.PIPE, env=env)
        lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in first.stdout], daemon=True).start()
        try:
            assert lines.get(timeout=WAIT_SECONDS).startswith(b"following http://127.0.0.1:")
            assert lines.get(timeout=WAIT_SECONDS).startswith(b"live     0-")  # >= 6 s
            first.send_signal(signal.SIGKILL)  # wherever it is in the next chunk
            first.wait(timeout=WAIT_SECONDS)
        finally:
            first.kill()
        second = subprocess.run(
            [*command, "--quiet"], capture_output=True, text=True, env=env,
            timeout=WAIT_SECONDS * 3,
        )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "secret" not in second.stdout + second.stderr
    live_lines = [line for line in second.stdout.splitlines() if line.startswith("live ")]
    assert live_lines and not live_lines[0].startswith("live     0-")  # resumed, not redone
    index = VideoIndex(folder, embed_model=embed_model)
    final, entries = rows(index), index.library()
    first_hits = index.search("mister john dashwood had leisure to consider", top_k=1)
    last_hits = index.search("he might even have been made amiable himself", top_k=1)
    index.close()
    assert [e.status for e in entries] == ["indexed"]
    assert len(list(index.folder.downloads.glob("*.mkv"))) == 1
    assert {r[0] for r in final} == {entries[0].content_hash}
    assert len({r[1:3] for r in final}) == len(final)  # no moment twice
    assert first_hits and said_near(first_hits[0].start, facts[0]["start"], 2.0)
    assert last_hits and said_near(last_hits[0].start, facts[-1]["start"], 6.0)
