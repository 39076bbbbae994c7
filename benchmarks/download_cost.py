"""What a link costs: ``ingest URL`` of a direct media link against ``ingest`` of the same
file from disk, in the same run.

    python benchmarks/download_cost.py [--file examples/media/ozone_explainer.mp4]
                                       [--rounds 3] [--blob-mb 200]

A stdlib HTTP server on 127.0.0.1 (a thread of this process) serves the file. Each
round ingests it twice into fresh index folders, once by path and once by link, the
order alternating between rounds; the speech model, the OCR engine and the embedding
are loaded once beforehand and shared, so both variants do the same work apart from
the download (streaming to ``media/downloads``, the sha256, the origin sidecar). Both
indexes must end with the same moments. Reported: the median wall time of each
variant, and the difference (the download's cost) in seconds and against the
from-disk baseline.

The example files are small (0.5 MB), so the cost per byte is measured apart:
``download_media`` of a ``--blob-mb`` file of random bytes from the same server,
against copying that file on disk. Over loopback this is the package's own overhead
(writing, hashing), not the network's: a real link adds its bandwidth on top.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_FILE = ROOT / "examples" / "media" / "ozone_explainer.mp4"
MB = 1 << 20


def download_cost(from_disk: list[float], from_link: list[float]) -> dict[str, float]:
    """Median seconds of each variant, and what the link adds (seconds and % of disk)."""
    if not from_disk or len(from_disk) != len(from_link):
        raise ValueError("need the same number (>= 1) of runs of each variant")
    disk, link = statistics.median(from_disk), statistics.median(from_link)
    return {
        "disk_s": disk,
        "link_s": link,
        "added_s": link - disk,
        "added_pct": 100 * (link - disk) / disk,
    }


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on a free loopback port; yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--blob-mb", type=int, default=200)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.blob_mb < 1:
        parser.error("--rounds and --blob-mb must be >= 1")

    from llama_index_video.embeddings.local import local_embedding
    from llama_index_video.index import VideoIndex
    from llama_index_video.ocr import default_ocr_engine
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.sources.download import download_media
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    work = Path(tempfile.mkdtemp(prefix="download-cost-"))
    served = work / "served"
    served.mkdir()
    shutil.copyfile(args.file, served / args.file.name)
    loading = time.perf_counter()
    embed_model = local_embedding()
    embed_model.get_text_embedding("warm up")
    transcriber = FasterWhisperTranscriber()
    ocr = default_ocr_engine()
    load_s = time.perf_counter() - loading

    def ingest(what: str, name: str) -> int:
        folder = work / name
        reader = VideoReader(
            media_dir=folder / "media", transcriber=transcriber, ocr=ocr if ocr else False
        )
        index = VideoIndex(folder, embed_model=embed_model, reader=reader)
        try:
            report = index.ingest([what])
            if not report.ok:
                raise SystemExit(f"{what}: ingest failed: {report}")
            return sum(sum(e.moments.values()) for e in index.library())
        finally:
            index.close()

    size_mb = args.file.stat().st_size / MB
    print(f"{args.file.name}: {size_mb:.2f} MB; models loaded in {load_s:.1f} s")
    with serving(served) as base:
        link = f"{base}/{args.file.name}"
        ingest(str(args.file), "warm-up")  # first-call costs (decoders, ONNX sessions)
        runs: dict[str, list[float]] = {"disk": [], "link": []}
        moments: dict[str, set[int]] = {"disk": set(), "link": set()}
        for round_ in range(args.rounds):
            order = [("disk", str(args.file)), ("link", link)]
            for kind, what in order if round_ % 2 == 0 else reversed(order):
                started = time.perf_counter()
                moments[kind].add(ingest(what, f"{kind}-{round_}"))
                runs[kind].append(time.perf_counter() - started)
                print(f"  round {round_ + 1} {kind:<4} {runs[kind][-1]:6.2f} s")
        if len(moments["disk"] | moments["link"]) != 1:
            raise SystemExit(f"the two variants indexed different moments: {moments}")
        print(f"  both variants: {moments['disk'].pop()} moments every time")
        figures = download_cost(runs["disk"], runs["link"])

        blob = served / "blob.mp4"
        with blob.open("wb") as out:
            for _ in range(args.blob_mb):
                out.write(os.urandom(MB))
        copy_s = _timed(lambda: shutil.copyfile(blob, work / "blob-copy.mp4"))
        fetch_s = _timed(lambda: download_media(f"{base}/blob.mp4", work / "downloads"))
    shutil.rmtree(work, ignore_errors=True)

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}"
    )
    print(
        f"ingest, median of {args.rounds}: from disk {figures['disk_s']:.2f} s (baseline), "
        f"from the link {figures['link_s']:.2f} s: "
        f"{figures['added_s']:+.2f} s ({figures['added_pct']:+.1f} %)"
    )
    print(
        f"{args.blob_mb} MB of random bytes: download_media {fetch_s:.2f} s "
        f"({args.blob_mb / fetch_s:.0f} MB/s, {1024 / args.blob_mb * fetch_s:.1f} s per GB), "
        f"disk copy {copy_s:.2f} s ({args.blob_mb / copy_s:.0f} MB/s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
