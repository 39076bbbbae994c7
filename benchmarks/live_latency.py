"""How soon ``ingest --live`` makes what is said searchable, against ingesting the file
once it is finished (issue 37).

A thread writes real human speech (the LibriVox reading in tests/fixtures/speech, 24.7 s,
its sentence times beside it), ``--repeat`` times over, into a Matroska file at real time
(one second of audio per second). :func:`~llama_index_video.live.ingest_live` follows it
over a fresh index (default reader: faster-whisper tiny.en, the local embedding). After
each stored chunk every sentence of the first reading not found yet is searched; it is
found when a hit of the top 3 starts within 2 s of it. Its latency is found - the moment
its end was written. Later readings repeat the same words, so a search cannot tell
their copies apart: for every sentence of every reading, *stored* is when the chunk
holding its end was committed (searchable from then on) - the moment its end was
written; a sentence no chunk stored before the recording ended (a follower still behind
then leaves the rest to the final ingest) is searchable when that ingest ends.
The baseline in the same run: the ingest of the finished file ends (``--settle`` after
the last write, plus the whole ingest), minus the same moment. Then the finished file is
ingested into a second, fresh index, and the rows of both (times, text) compared.

    python benchmarks/live_latency.py [--repeat 3] [--chunk-seconds 10] [--settle 3]
        [--stream] [--modes catch-up,fixed]

``--stream`` serves the reading as a live HLS playlist from loopback instead (AAC in
2 s segments, written at real time; ``--settle 5`` or more, as segments come every
2 s), and the normal ingest reads the stream's copy in the index folder.

``--repeat 49`` is a 20-minute recording (24.7 s of speech, 49 times).

``--modes catch-up,fixed`` follows the one growing file with both kinds of chunks at
once, each over its own index in its own thread, so both share the machine's load (and
each is the other's load): *catch-up* chunks are ``--chunk-seconds`` or, when more is
there already, up to :data:`~llama_index_video.live.CATCH_UP_SECONDS`; *fixed* chunks
are always ``--chunk-seconds``. Each waits for the others before its final ingest, so
no final ingest loads another follower's last chunks. The load is sampled every 30 s.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402
from llama_index_video.live import CATCH_UP_SECONDS, LiveChunk, ingest_live  # noqa: E402
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio  # noqa: E402
from llama_index_video.reader.video_reader import VideoReader  # noqa: E402

SPEECH = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
MATCH_SECONDS = 2.0
MODES = {"catch-up": CATCH_UP_SECONDS, "fixed": 0.0}
"""Kind of chunks -> the most seconds a chunk takes when more is there already."""
LOAD_EVERY = 30.0
BARRIER_SECONDS = 900.0
"""The longest a follower waits for the others before its final ingest."""


def write_samples(path: Path, samples: np.ndarray, pace: float) -> None:
    """Matroska PCM of ``samples`` (16 kHz mono), one second every ``pace`` s, flushed as
    it goes (clusters of 1 s) so a reader sees it grow."""
    options = {"flush_packets": "1", "cluster_time_limit": "1000", "live": "1"}
    with av.open(str(path), "w", format="matroska", container_options=options) as container:
        stream = container.add_stream("pcm_s16le", rate=SAMPLE_RATE, layout="mono")
        for number, start in enumerate(range(0, len(samples), SAMPLE_RATE)):
            block = samples[start : start + SAMPLE_RATE]
            pcm = (np.clip(block, -1, 1) * 32767).astype(np.int16).reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
            frame.rate, frame.pts = SAMPLE_RATE, number * SAMPLE_RATE
            for packet in stream.encode(frame):
                container.mux(packet)
            time.sleep(pace)


SLIDES = {0: "LAUNCH CODE ORANGE", 8: "LUNCH ON THE ROOF"}
"""Second -> the slide's text shown from then on, in a video stream."""


def slide(text: str) -> np.ndarray:
    image = Image.new("RGB", (640, 360), (255, 255, 255))
    ImageDraw.Draw(image).text((40, 150), text, fill=(0, 0, 0), font_size=44)
    return np.asarray(image)


def write_hls(folder: Path, samples: np.ndarray, pace: float, *, video: bool = False) -> None:
    """``folder/live.m3u8`` and its segments: ``samples`` (16 kHz mono) as AAC, one
    second every ``pace`` s, in MPEG-TS segments of 2 s listed by an ``EVENT`` playlist
    that keeps them all; with ``video``, :data:`SLIDES` at 5 fps (640x360), H.264."""
    options = {"hls_time": "2", "hls_list_size": "0", "hls_playlist_type": "event"}
    with av.open(
        str(folder / "live.m3u8"), "w", format="hls", container_options=options
    ) as container:
        audio = container.add_stream("aac", rate=SAMPLE_RATE, layout="mono")
        picture = None
        if video:
            picture = container.add_stream("libx264", rate=5)
            picture.width, picture.height, picture.pix_fmt = 640, 360, "yuv420p"
            picture.options = {"g": "5", "preset": "ultrafast", "tune": "zerolatency"}
        for second, start in enumerate(range(0, len(samples), SAMPLE_RATE)):
            pcm = (np.clip(samples[start : start + SAMPLE_RATE], -1, 1) * 32767).astype(np.int16)
            frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
            frame.rate, frame.pts = SAMPLE_RATE, start
            for packet in audio.encode(frame):
                container.mux(packet)
            if picture is not None:
                shown = slide(SLIDES[max(t for t in SLIDES if t <= second)])
                for number in range(5):
                    still = av.VideoFrame.from_ndarray(shown, format="rgb24")
                    still.pts = second * 5 + number
                    container.mux(picture.encode(still))
            time.sleep(pace)
        container.mux(audio.encode(None))
        if picture is not None:
            container.mux(picture.encode(None))


def serve_folder(folder: Path) -> http.server.ThreadingHTTPServer:
    """An HTTP server of ``folder`` on a free loopback port, in a daemon thread."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _rows(index: VideoIndex) -> list[tuple[float, float, str]]:
    """Every row's times and text, sorted."""
    got = index.vector_store.client.get(include=["metadatas", "documents"])
    return sorted(
        (float(m["start_s"]), float(m["end_s"]), str(d))
        for m, d in zip(got["metadatas"], got["documents"], strict=True)
    )


Sentence = tuple[float, float, str]


@dataclass
class Followed:
    """One follower's run: when each sentence of the first reading was found, when each
    chunk was committed, when its final ingest ended (seconds since the writing began)."""

    mode: str
    found: dict[int, float] = field(default_factory=dict)
    stored: list[tuple[float, float]] = field(default_factory=list)  # chunk end, committed
    finished: float = 0.0
    ok: bool = False
    rows: list[tuple[float, float, str]] = field(default_factory=list)


def follow(
    folder: Path,
    source: str | Path,
    followed: Followed,
    sentences: list[Sentence],
    *,
    first: int,
    began: float,
    args: argparse.Namespace,
    at_end: threading.Barrier | None = None,
) -> None:
    """``ingest_live`` of ``source`` into ``folder``'s index, searching the first reading's
    ``first`` sentences after each chunk; ``at_end`` is waited for before the final
    ingest (the live chunks are over then)."""
    index = VideoIndex(folder / "index", reader=VideoReader(media_dir=folder / "media"))
    final_ingest = index.ingest

    def ingest_after_the_others(*args: Any, **kwargs: Any) -> Any:
        if at_end is not None:
            with contextlib.suppress(threading.BrokenBarrierError):
                at_end.wait(timeout=BARRIER_SECONDS)
        return final_ingest(*args, **kwargs)

    index.ingest = ingest_after_the_others  # type: ignore[method-assign]

    def search(chunk: LiveChunk) -> None:
        now = time.monotonic() - began
        followed.stored.append((chunk.end, now))
        for number, (start, end, text) in enumerate(sentences[:first]):
            if number in followed.found or end > chunk.end:
                continue
            hits = index.search(text, top_k=3)
            if any(abs(h.start - start) <= MATCH_SECONDS for h in hits):
                followed.found[number] = now

    try:
        report = ingest_live(
            index,
            source,
            chunk_seconds=args.chunk_seconds,
            catch_up_seconds=MODES[followed.mode],
            settle=args.settle,
            report=search,
        )
    except BaseException:
        if at_end is not None:
            at_end.abort()  # the others wait for no one
        raise
    followed.finished = time.monotonic() - began
    followed.ok = report.ok
    followed.rows = _rows(index)
    index.close()


def sample_load(loads: list[float], done: threading.Event) -> None:
    """The 1-minute load average every :data:`LOAD_EVERY` seconds until ``done``."""
    while not done.wait(LOAD_EVERY):
        loads.append(os.getloadavg()[0])


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-seconds", type=float, default=10.0)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument(
        "--stream", action="store_true", help="an HLS stream served from loopback, not a file"
    )
    parser.add_argument(
        "--no-compare", action="store_true", help="skip the second, normal ingest of the file"
    )
    parser.add_argument(
        "--modes",
        default="catch-up",
        help=f"kinds of chunks followed at once, comma-separated, of {', '.join(MODES)}",
    )
    args = parser.parse_args()
    modes = args.modes.split(",")
    if not modes or any(m not in MODES for m in modes) or (args.stream and len(modes) > 1):
        parser.error(f"--modes: one or more of {', '.join(MODES)} (one with --stream)")
    once = json.loads(SPEECH.with_suffix(".json").read_text())
    samples = decode_audio(SPEECH)
    length = len(samples) / SAMPLE_RATE
    sentences = [
        (s["start"] + n * length, s["end"] + n * length, s["text"])
        for n in range(args.repeat)
        for s in once["sentences"]
    ]
    first = len(once["sentences"])
    runs = [Followed(mode) for mode in modes]
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        recording = folder / "reading.mkv"
        source: str | Path = recording
        writer = threading.Thread(
            target=write_samples, args=(recording, np.tile(samples, args.repeat), 1.0)
        )
        if args.stream:  # the playlist's segments come every 2 s: settle must exceed that
            (folder / "hls").mkdir()
            server = serve_folder(folder / "hls")
            source = f"http://127.0.0.1:{server.server_address[1]}/live.m3u8"
            writer = threading.Thread(
                target=write_hls, args=(folder / "hls", np.tile(samples, args.repeat), 1.0)
            )
        at_end = threading.Barrier(len(runs)) if len(runs) > 1 else None
        done = threading.Event()
        sampler = threading.Thread(target=sample_load, args=(loads, done), daemon=True)
        began = time.monotonic()
        writer.start()
        sampler.start()
        while args.stream and not (folder / "hls" / "live.m3u8").exists():
            time.sleep(0.05)  # the playlist appears with the first segment, 2 s in
        followers = [
            threading.Thread(
                target=follow,
                args=(folder / run.mode, source, run, sentences),
                kwargs={"first": first, "began": began, "args": args, "at_end": at_end},
            )
            for run in runs
        ]
        for thread in followers:
            thread.start()
        for thread in followers:
            thread.join()
        done.set()
        writer.join()
        if args.stream:
            server.shutdown()
            (recording,) = (folder / runs[0].mode / "index").glob("media/downloads/*.mkv")
        normal_rows = None
        if not args.no_compare:
            normal = VideoIndex(folder / "normal", reader=VideoReader(media_dir=folder / "media2"))
            normal.ingest([recording])
            normal_rows = _rows(normal)
            normal.close()
    loads.append(os.getloadavg()[0])
    print(f"{'HLS stream' if args.stream else 'growing Matroska file'}; {len(sentences)} "
          f"sentences of real speech over {length * args.repeat:.0f} s; chunks of "
          f"{args.chunk_seconds:g} s; load (1-minute, every {LOAD_EVERY:g} s): min "
          f"{min(loads):.1f}, median {statistics.median(loads):.1f}, max {max(loads):.1f}; "
          f"now {load_average()}")  # fmt: skip
    for run in runs:
        live = [run.found[n] - sentences[n][1] for n in sorted(run.found)]
        kept = [next((t for e, t in run.stored if e >= end), None) for _, end, _ in sentences]
        committed = [
            (run.finished if t is None else t) - end
            for t, (_, end, _) in zip(kept, sentences, strict=True)
        ]
        live_count = sum(t is not None for t in kept)
        whole = [run.finished - end for _, end, _ in sentences]
        same = None if normal_rows is None else run.rows == normal_rows
        print(f"{run.mode} chunks (up to {max(MODES[run.mode], args.chunk_seconds):g} s): "
              f"final ingest ok: {run.ok}; first reading found while live: {len(run.found)} "
              f"of {first}; stored while live: {live_count} of {len(sentences)}; "
              f"rows: {len(run.rows)}, identical to a normal ingest: {same}")  # fmt: skip
        for name, values in (
            ("ingest --live (found)", live),
            ("ingest --live (stored)", committed),
            ("ingest once finished", whole),
        ):
            if values:
                print(
                    f"  {name:22} said -> searchable: median {statistics.median(values):5.1f} s, "
                    f"p95 {p95(values):5.1f} s, max {max(values):5.1f} s"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
