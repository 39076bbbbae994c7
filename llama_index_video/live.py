"""Recordings searchable while they are written: ``llama-index-video ingest --live``.

:func:`ingest_live` follows a file that is still growing (a meeting recorder's output).
Each time ``chunk_seconds`` more of its audio can be decoded, that chunk is transcribed
and its units stored (:mod:`llama_index_video.store.live`), so what was said is
searchable a chunk's length plus its transcription after it was said, and the
recording is listed as ``live``. Chunks are cut at fixed times; frames and on-screen
text are not read while it grows.

The recording ends when the file has not grown for ``settle`` seconds, or after
``max_seconds`` or ``max_bytes``: every wait is bounded, so the loop ends by
construction. Then the finished file is ingested the normal way, which replaces the
live rows at once: the final index holds exactly the rows an ingest of the finished
file gives (units joined across the chunk seams, frames, chapters). A run killed at
any moment resumes, when started again, after the last stored chunk.

Only formats readable while they grow work: WAV, MP3, Ogg, Matroska/WebM. An MP4 or
MOV being recorded has no index (``moov`` atom) until it is finished.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.store.ingest_report import IngestReport

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SECONDS = 30.0
DEFAULT_SETTLE_SECONDS = 10.0
DEFAULT_MAX_SECONDS = 12 * 3600.0
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class LiveChunk:
    """One chunk stored while the recording grew."""

    start: float
    end: float
    units: int


def ingest_live(
    index: VideoIndex,
    path: str | Path,
    *,
    chunk_seconds: float = DEFAULT_CHUNK_SECONDS,
    settle: float = DEFAULT_SETTLE_SECONDS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    max_bytes: int | None = None,
    wait: float = DEFAULT_WAIT_SECONDS,
    stop: threading.Event | None = None,
    report: Callable[[LiveChunk], None] | None = None,
) -> IngestReport:
    """Index ``path`` in chunks while it grows, then whole once it ends.

    Args:
        index: The index written to.
        path: A file being written (WAV, MP3, Ogg, Matroska/WebM).
        chunk_seconds: Seconds of audio per chunk.
        settle: The recording has ended when the file has not grown for this long.
        max_seconds: It has ended this long after the start, whatever the file does.
        max_bytes: It has ended once the file is this large.
        wait: Seconds each write waits for another writer of the index.
        stop: Set to end the recording now (Ctrl-C).
        report: Told of each chunk stored.

    Returns:
        The report of the final ingest of the whole file.

    Raises:
        MediaError: the file does not appear within ``settle`` seconds, or is not a
            growing audio or video file.
    """
    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio_span
    from llama_index_video.reader.moments import SourceFile, transcript_nodes
    from llama_index_video.reader.units import build_units
    from llama_index_video.store.live import HEAD_BYTES, LiveRows, live_key

    if chunk_seconds <= 0 or settle < 0 or max_seconds <= 0:
        raise ValueError("chunk_seconds and max_seconds must be > 0, settle >= 0")
    path = Path(path)
    stop = stop or threading.Event()
    started = time.monotonic()
    deadline = started + max_seconds
    growth = _Growth(path, settle=settle, max_bytes=max_bytes)
    while growth.size() < HEAD_BYTES and not growth.ended(deadline, stop):
        time.sleep(POLL_SECONDS)
    if not path.is_file():
        raise MediaError(path, f"file not found (waited {settle:g} s for it to appear)")
    with path.open("rb") as handle:
        key = live_key(path, handle.read(HEAD_BYTES))
    reader = index.reader
    source = SourceFile(path, key)
    rows = LiveRows(index.index, index.manifest, index.lexical, path=path, key=key)
    with index._writing(wait):
        done = rows.stored_until()
        index.lexical.refresh()
    if done:
        logger.info("%s: resuming after %.1f s already stored", path, done)
    ended = False
    while not ended:
        ended = growth.ended(deadline, stop)
        try:
            chunk = decode_audio_span(path, done, chunk_seconds)
        except MediaError:
            if not ended:
                time.sleep(POLL_SECONDS)
                continue
            raise
        full = len(chunk.samples) >= int(chunk_seconds * SAMPLE_RATE)
        if not full and not ended:
            time.sleep(POLL_SECONDS)
            continue
        if not len(chunk.samples):
            break
        speech = reader.transcribe_chunk(chunk, source=path)
        units = list(build_units(speech.segments, reader.units))
        nodes = list(transcript_nodes(source, units, language=speech.language, note=None))
        with index._writing(wait):
            rows.add(list(nodes), until=chunk.end)
            index.lexical.refresh()
        done = chunk.end
        (report or (lambda chunk: None))(LiveChunk(chunk.start, chunk.end, len(nodes)))
    if not path.is_file():
        raise VideoIndexError(f"{path}: the recording is gone; its live moments stay listed")
    return index.ingest([path], wait=wait)


class _Growth:
    """Whether a growing file has ended: unchanged for ``settle`` seconds, or a limit."""

    def __init__(self, path: Path, *, settle: float, max_bytes: int | None) -> None:
        self._path = path
        self._settle = settle
        self._max_bytes = max_bytes
        self._last: tuple[int, int] | None = None
        self._since = time.monotonic()

    def size(self) -> int:
        try:
            return self._path.stat().st_size
        except OSError:
            return 0

    def ended(self, deadline: float, stop: threading.Event) -> bool:
        now = time.monotonic()
        try:
            stat = self._path.stat()
            state = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            state = (-1, -1)
        if state != self._last:
            self._last, self._since = state, now
        over_budget = self._max_bytes is not None and state[0] >= self._max_bytes
        return stop.is_set() or now >= deadline or over_budget or now - self._since >= self._settle
