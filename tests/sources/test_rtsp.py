"""``ingest --live rtsp://...``: a real RTSP server (GStreamer's, tests/rtsp_server.py) on
loopback plays known tones at real time; the recording is searchable while it plays,
ends as a normal ingest of its copy, and every wait is bounded.

The tones are heard by :class:`tests.test_live.ToneTranscriber`, so every fact's time
is known. The URL carries a user and password,
as a camera's does: neither reaches the copy's name, its origin or the listing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.errors import DownloadError
from llama_index_video.live import LiveChunk, ingest_live
from llama_index_video.sources.stream import record_stream
from tests.real_servers import _process, free_port
from tests.test_live import RATE, WAIT_SECONDS, open_index, rows
from tests.test_live_stream import tones
from tests_support import ROOT

SYSTEM_PYTHON = "/usr/bin/python3"
SERVER = ROOT / "tests" / "rtsp_server.py"
START_SECONDS = 30.0
SCRIPT = [0, 440, 440, 0, 0, 0, 0, 0]
"""The tone of each second played (tests/test_live.py's FACTS: the launch code at 1 s)."""


def _has_gst_rtsp_server() -> bool:
    if shutil.which(SYSTEM_PYTHON) is None:
        return False
    probe = "import gi; gi.require_version('GstRtspServer', '1.0')"
    return subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not _has_gst_rtsp_server(),
    reason="no GStreamer RTSP server: apt-get install python3-gi gir1.2-gst-rtsp-server-1.0 "
    "gstreamer1.0-plugins-good (scripts/test.sh does)",
)


@contextmanager
def rtsp_serving(folder: Path, samples: np.ndarray) -> Iterator[str]:
    """``samples`` (16 kHz mono) served by a real RTSP server on a free loopback port,
    played at real time from the first client on; yields its URL (with a user and
    password) once the server listens. The server is always stopped."""
    folder.mkdir()
    audio = folder / "played.wav"
    with wave.open(str(audio), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    port = free_port()
    with _process([SYSTEM_PYTHON, str(SERVER), str(audio), str(port)]) as (server, log):
        deadline = time.monotonic() + START_SECONDS
        while "ready" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield f"rtsp://camera:secret@127.0.0.1:{port}/live"


def test_a_live_rtsp_stream_is_searchable_while_it_plays_and_ends_as_a_normal_ingest(
    tmp_path, embed_model
):
    """8 s played, the launch code said at 1-3 s: the first 4 s chunk is searchable
    while the rest still plays."""
    index = open_index(tmp_path / "index", embed_model)
    while_playing: list[tuple[float, str]] = []

    def look(chunk: LiveChunk) -> None:
        if chunk.end < len(SCRIPT) - 1:
            hits = index.search("what is the launch code", top_k=1)
            while_playing.extend((h.start, e.status) for h in hits for e in index.library())

    began = time.monotonic()
    with rtsp_serving(tmp_path / "rtsp", tones(SCRIPT)) as url:
        report = ingest_live(
            index, url, chunk_seconds=4.0, settle=5.0, max_seconds=WAIT_SECONDS, report=look
        )
    assert report.ok, report
    assert time.monotonic() - began >= len(SCRIPT) - 1  # it played at real time
    assert while_playing, "no search result while the stream played"
    start, status = while_playing[0]
    assert abs(start - 1.0) <= 0.5 and status == "live"
    (entry,) = index.library()
    assert entry.status == "indexed"
    assert entry.source.startswith("rtsp://127.0.0.1:") and "secret" not in entry.source
    (copy,) = index.folder.downloads.glob("*.mkv")
    assert copy.name.startswith("127.0.0.1-") and "secret" not in copy.name
    assert json.loads(copy.with_name(copy.stem + ".origin.json").read_text())["url"] == entry.source
    live_rows = rows(index)
    index.close()
    normal = open_index(tmp_path / "normal", embed_model)
    assert normal.ingest([copy]).ok
    assert live_rows == rows(normal) and len(live_rows) == 1
    normal.close()


def test_recording_an_rtsp_stream_ends_at_its_time_limit_and_a_dead_url_is_one_line(tmp_path):
    copy = tmp_path / "copy" / "camera.mkv"
    with rtsp_serving(tmp_path / "rtsp", tones([440] * 60)) as url:
        began = time.monotonic()
        recorded = record_stream(
            url, copy, idle=5.0, deadline=began + 3.0, max_bytes=None, stop=threading.Event()
        )
        took = time.monotonic() - began
    assert recorded.ended == "time limit"
    assert 2.0 <= recorded.seconds <= 3.5 and took < 10.0
    dead = url.replace(url.rsplit(":", 1)[1].split("/")[0], str(free_port()))
    with pytest.raises(DownloadError, match=r"^rtsp://127\.0\.0\.1:\d+/live: cannot open") as err:
        record_stream(
            dead, copy, idle=5.0, deadline=time.monotonic() + WAIT_SECONDS, max_bytes=None,
            stop=threading.Event(),
        )  # fmt: skip
    assert "secret" not in str(err.value) and "\n" not in str(err.value)
