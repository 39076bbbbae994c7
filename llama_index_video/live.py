"""Recordings searchable while they are written: ``llama-index-video ingest --live``.

:func:`ingest_live` follows a file that is still growing (a meeting recorder's output),
or a stream (HLS, RTSP, HTTP/Icecast audio), which :mod:`llama_index_video.sources.stream`
records meanwhile into the index folder's ``media/downloads``, as
``<host-and-path>-<UTC start>.mkv`` beside a ``.origin.json`` naming the URL (without
its query or password). The stream's recording is listed under that file, its moments
link to the URL, and a restart finds the recording under way by the URL; once it has
ended, the next ``ingest --live`` of the same URL is a new recording.
Each time ``chunk_seconds`` more of its audio can be decoded (or up to
:data:`CATCH_UP_SECONDS`, when more is there already), that chunk is transcribed
and its units stored (:mod:`llama_index_video.store.live`), heard in the language the
recording has been heard in so far unless it is decisively another
(:mod:`llama_index_video.transcription.recording_language`), with, for a video, the
frames kept in the chunk's span and the text they show, so what was said and shown is
searchable a chunk's length plus its reading after it happened, and the recording is
listed as ``live``. A chunk ends where the audio written so far ends (a frame's span
ends at the seam).

The recording ends when the file has not grown (or the stream sent nothing) for
``settle`` seconds (longer while it is empty or a whole number of blocks: a recorder
that buffers has more to write), or after
``max_seconds`` or ``max_bytes``: every wait is bounded, so the loop ends by
construction. Then the finished file (the stream's copy) is ingested the normal way,
which replaces the live rows at once: the final index holds exactly the rows an ingest
of the finished file gives (units joined across the chunk seams, frames, chapters). A run killed at
any moment resumes, when started again, after the last stored chunk, in the language the
recording was settled in there; one a Ctrl-C (``stop``) ended goes on after what its
ingest held, if the file has only grown since (:mod:`llama_index_video.store.live`).

Only formats readable while they grow work: WAV, MP3, Ogg, Matroska/WebM, fragmented MP4.
Any other MP4 or MOV being recorded has no index (``moov`` atom) until it is finished.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import DownloadError, MediaError, VideoIndexError
from llama_index_video.media.probe import MP4_BOX_HEADER, mp4_box
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode

    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.moments import SourceFile
    from llama_index_video.reader.units import TranscriptUnit
    from llama_index_video.store.ingest_report import IngestReport
    from llama_index_video.store.live import LiveRows

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SECONDS = 30.0
DEFAULT_SETTLE_SECONDS = 10.0
DEFAULT_MAX_SECONDS = 12 * 3600.0
POLL_SECONDS = 0.5
CATCH_UP_SECONDS = 30.0
"""A chunk is at least ``chunk_seconds`` long; when more is already there (the follower
fell behind: a busy machine), it takes up to this much at once. Whisper reads audio in
30 s windows, so three 10 s chunks cost about three times one 30 s chunk to encode."""
BLOCK_BYTES = 4096
BLOCK_SECONDS = 120.0
"""How long a file whose size is a whole number of :data:`BLOCK_BYTES` may stay so
before the recording counts as ended (when ``settle`` is shorter), once the recorder's
pace is known: a recorder that buffers writes whole blocks until it stops, then the
rest. ffmpeg writes Matroska, Ogg and MP3 in 256 KiB blocks, 21 s apart for MP3 at 96
kbit/s, 65 s for Opus at 32 kbit/s; a finished file ends on a block boundary once in
4,096 files, and then ends this late. A fragmented MP4's blocks come after the ``ftyp``
box ffmpeg writes at once (28 bytes), so they are counted after it."""
BLOCK_PAUSES = 1.5
"""A file of whole blocks also waits this many times the longest pause between two of
its growths, when that is longer: blocks come at the recorder's pace, 131 s apart for a
phone bridge's MP3 at 16 kbit/s, 262 s at 8 kbit/s, past :data:`BLOCK_SECONDS`."""
RECORDER_BLOCK_BYTES = 256 * 1024
SLOWEST_SPEECH_BITRATE = 6000
"""Bits per second of the thinnest speech recording followed: Opus's narrowband floor
(an MP3's is 8 kbit/s)."""
UNKNOWN_PACE_SECONDS = BLOCK_PAUSES * RECORDER_BLOCK_BYTES * 8 / SLOWEST_SPEECH_BITRATE
"""How long an empty file, or one of whole blocks that has not yet grown twice while
followed, may stay so (524 s): :data:`BLOCK_PAUSES` times the 350 s ffmpeg takes to
write its first 256 KiB at :data:`SLOWEST_SPEECH_BITRATE` (a real meeting's came after
381 s); a pause measured from the follower's start is only part of one. A file nobody
writes is refused after it, or at ``max_seconds``, whichever is first."""


@dataclass(frozen=True)
class LiveChunk:
    """One chunk stored while the recording grew."""

    start: float
    end: float
    units: int


def ingest_live(
    index: VideoIndex,
    source: str | Path,
    *,
    chunk_seconds: float = DEFAULT_CHUNK_SECONDS,
    catch_up_seconds: float | None = None,
    settle: float = DEFAULT_SETTLE_SECONDS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    max_bytes: int | None = None,
    wait: float = DEFAULT_WAIT_SECONDS,
    stop: threading.Event | None = None,
    report: Callable[[LiveChunk], None] | None = None,
) -> IngestReport:
    """Index ``source`` in chunks while it grows or plays, then whole once it ends.

    Args:
        index: The index written to.
        source: A file being written (WAV, MP3, Ogg, Matroska/WebM, fragmented MP4), or
            the URL of a stream (``http://host/live.m3u8``), recorded into the index folder.
        chunk_seconds: Seconds of audio per chunk, at least (more when the follower is
            behind, up to ``catch_up_seconds``).
        catch_up_seconds: Seconds of audio a chunk may take when more is there already
            (the follower fell behind; default :data:`CATCH_UP_SECONDS`);
            ``chunk_seconds`` or less: every chunk is ``chunk_seconds`` long
            (``benchmarks/live_latency.py`` compares the two).
        settle: A file has ended when it has not grown for this long (while it is
            empty or holds whole blocks, longer: :data:`UNKNOWN_PACE_SECONDS` until it
            has grown twice, then :data:`BLOCK_SECONDS` or :data:`BLOCK_PAUSES` times
            its longest pause); a stream when no data has come for this long.
        max_seconds: It has ended this long after the start, whatever the file does.
        max_bytes: It has ended once the file (or the stream's copy) is this large.
        wait: Seconds each write waits for another writer of the index.
        stop: Set to end the recording now (Ctrl-C).
        report: Told of each chunk stored.

    Returns:
        The report of the final ingest of the whole file (or of the stream's copy).

    Raises:
        MediaError: the file does not appear within ``settle`` seconds, stays empty
            (see ``settle``), or is not a growing audio or video file.
        DownloadError: the stream cannot be opened or has no audio.
    """
    from llama_index_video.sources.stream import is_stream
    from llama_index_video.store.live import HEAD_BYTES, live_key

    if chunk_seconds <= 0 or settle < 0 or max_seconds <= 0:
        raise ValueError("chunk_seconds and max_seconds must be > 0, settle >= 0")
    stop = stop or threading.Event()
    deadline = time.monotonic() + max_seconds
    follow = _Follower(
        index,
        chunk_seconds=chunk_seconds,
        catch_up_seconds=CATCH_UP_SECONDS if catch_up_seconds is None else catch_up_seconds,
        wait=wait,
        report=report,
    )
    if isinstance(source, str) and is_stream(source):
        return _ingest_stream(
            index, source, follow, settle=settle, deadline=deadline, max_bytes=max_bytes,
            stop=stop,
        )  # fmt: skip
    path = Path(source)
    started = time.monotonic()
    growth = _Growth(path, settle=settle, max_bytes=max_bytes)
    while growth.size() < HEAD_BYTES and not growth.ended(deadline, stop):
        time.sleep(POLL_SECONDS)
    if not path.is_file():
        raise MediaError(path, f"file not found (waited {settle:g} s for it to appear)")
    if growth.size() == 0:
        now = time.monotonic()
        why = (
            "the time it may follow (--max-hours) ran out first"
            if now >= deadline
            else f"a recorder writes its first {RECORDER_BLOCK_BYTES // 1024} KiB sooner even"
            f" at {SLOWEST_SPEECH_BITRATE // 1000} kbit/s; is it recording to this file?"
            " (--live-settle waits longer)"
        )
        raise MediaError(path, f"still empty after {now - started:.0f} s: {why}")
    with path.open("rb") as handle:
        key = live_key(path, handle.read(HEAD_BYTES))
    follow(path, key, ended=lambda: growth.ended(deadline, stop))
    if not path.is_file():
        raise VideoIndexError(f"{path}: the recording is gone; its live moments stay listed")
    return _ingest_finished(index, path, key, wait=wait, stopped=stop.is_set())


def _ingest_stream(
    index: VideoIndex,
    url: str,
    follow: _Follower,
    *,
    settle: float,
    deadline: float,
    max_bytes: int | None,
    stop: threading.Event,
) -> IngestReport:
    """Record ``url`` into the index folder's downloads in a thread, follow the copy,
    and ingest it once the stream has ended. The recording under way is found again by
    its URL (a manifest note), so a restart goes on with the same copy and rows."""
    import av

    from llama_index_video.sources.origin import Origin, redact, write_origin
    from llama_index_video.sources.stream import RecordedStream, record_stream, stream_copy_name
    from llama_index_video.store.live import live_key

    note = "live-stream:" + hashlib.sha256(url.encode()).hexdigest()[:32]
    with index._writing(follow.wait):
        name = index.manifest.get_meta(note)
        if not name:
            name = stream_copy_name(url, datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S"))
            index.manifest.set_meta(note, name)
    target = index.folder.downloads / name
    target.parent.mkdir(parents=True, exist_ok=True)
    write_origin(target, Origin(url=redact(url), site="stream"))
    outcome: list[RecordedStream | VideoIndexError] = []
    halt = threading.Event()

    def record() -> None:
        try:
            outcome.append(
                record_stream(
                    url,
                    target,
                    idle=max(settle, POLL_SECONDS),
                    deadline=deadline,
                    max_bytes=max_bytes,
                    stop=halt,
                )
            )
        except VideoIndexError as exc:
            outcome.append(exc)
        except (OSError, av.error.FFmpegError) as exc:  # writing the copy
            outcome.append(DownloadError(redact(url), f"recording failed ({exc})"))

    recorder = threading.Thread(target=record, name="stream-recorder", daemon=True)
    recorder.start()
    key = live_key(target, url.encode())
    try:
        follow(
            target,
            key,
            ended=lambda: not recorder.is_alive() or stop.is_set() or time.monotonic() >= deadline,
        )
    except MediaError:
        if not outcome:
            raise
    finally:
        halt.set()  # the recorder's reads wait at most ``settle``: the join ends
        recorder.join()
    if isinstance(outcome[0], VideoIndexError):
        raise outcome[0]
    logger.info("%s: %.0f s recorded (%s)", redact(url), outcome[0].seconds, outcome[0].ended)
    report = _ingest_finished(index, target, key, wait=follow.wait)
    with index._writing(follow.wait):
        index.manifest.forget_meta(note)  # the next recording of this URL is a new one
    return report


def _ingest_finished(
    index: VideoIndex, path: Path, key: str, *, wait: float, stopped: bool = False
) -> IngestReport:
    """Ingest the recording whole, which replaces its live rows, then forget what was
    kept to resume them (``stopped``: it ended by Ctrl-C, see
    :mod:`llama_index_video.store.live`)."""
    report = index.ingest([path], wait=wait)
    with index._writing(wait):
        forgot = _live_rows(index, path, key).finish(stopped=stopped)
        index._finish_write(index._ingestor(None), forgot=forgot)
    return report


def _live_rows(index: VideoIndex, path: Path, key: str) -> LiveRows:
    """The rows of ``path``'s live recording in ``index`` (use inside ``_writing`` only)."""
    from llama_index_video.store.live import LiveRows

    return LiveRows(
        index.index,
        index.manifest,
        index.lexical,
        path=path,
        key=key,
        forget=lambda content: index._ingestor(None).remove(content),
    )


class _Follower:
    """Stores a growing file's audio a chunk at a time, from where the last run stopped."""

    def __init__(
        self,
        index: VideoIndex,
        *,
        chunk_seconds: float,
        catch_up_seconds: float,
        wait: float,
        report: Callable[[LiveChunk], None] | None,
    ) -> None:
        self.index = index
        self.chunk_seconds = chunk_seconds
        self.catch_up_seconds = max(chunk_seconds, catch_up_seconds)
        self.wait = wait
        self.report = report or (lambda chunk: None)

    def __call__(self, path: Path, key: str, *, ended: Callable[[], bool]) -> None:
        """Follow ``path`` (rows under ``key``) until ``ended()`` and its last chunk."""
        from llama_index_video.media.audio import SAMPLE_RATE, decode_audio_span
        from llama_index_video.reader.moments import SourceFile, transcript_nodes
        from llama_index_video.reader.units import build_units
        from llama_index_video.transcription.recording_language import (
            RecordingLanguage,
            heard_in,
        )

        index, reader = self.index, self.index.reader
        source = SourceFile(path, key)
        with index._writing(self.wait):
            stored = _live_rows(index, path, key).stored()
            index.lexical.refresh()
        done = stored.until
        if done:
            logger.info(
                "%s: resuming after %.1f s already stored (language: %s)",
                path, done, stored.settled or "not settled",
            )  # fmt: skip
        language = RecordingLanguage(stored.settled)
        over = False
        while not over:
            over = ended()
            try:
                chunk = decode_audio_span(path, done, self.catch_up_seconds)
            except MediaError as exc:
                if not over:
                    time.sleep(POLL_SECONDS)
                    continue
                if done == 0:  # a muxer that holds back its first cluster (Matroska: ~2 s)
                    raise MediaError(
                        path,
                        f"{exc.reason}; it stopped growing before its first audio could be"
                        " read: give it a longer --live-settle",
                    ) from exc
                raise
            full = len(chunk.samples) >= int(self.chunk_seconds * SAMPLE_RATE)
            if not full and not over:
                time.sleep(POLL_SECONDS)
                continue
            if not len(chunk.samples):
                break
            with heard_in(language):
                speech = reader.transcribe_chunk(chunk, source=path)
            units = list(build_units(speech.segments, reader.units))
            nodes: list[BaseNode] = list(
                transcript_nodes(source, units, language=speech.language, note=None)
            )
            nodes.extend(self._screens(source, units, nodes, chunk.start, chunk.end))
            with index._writing(self.wait):
                _live_rows(index, path, key).add(nodes, until=chunk.end, settled=language.settled)
                index.lexical.refresh()
            done = chunk.end
            self.report(LiveChunk(chunk.start, chunk.end, len(nodes)))

    def _screens(
        self,
        source: SourceFile,
        units: list[TranscriptUnit],
        spoken: list[BaseNode],
        start: float,
        end: float,
    ) -> list[BaseNode]:
        """The frames and on-screen text of a chunk of video, linked to what was said in
        it; none for audio, or when the span's video cannot be decoded yet (the final
        ingest reads them all)."""
        from llama_index_video.reader.moments import link_moments

        try:
            shown = self.index.reader.screen_nodes(source, units, start=start, end=end)
        except MediaError as exc:
            logger.info(
                "%s: no frames stored for %.0f-%.0f s while live (%s)", source.path, start, end, exc
            )
            return []
        link_moments(spoken, shown)
        return shown


class _Growth:
    """Whether a growing file has ended: unchanged for ``settle`` seconds, or a limit."""

    def __init__(self, path: Path, *, settle: float, max_bytes: int | None) -> None:
        self._path = path
        self._settle = settle
        self._max_bytes = max_bytes
        self._last: tuple[int, int] | None = None
        self._since = time.monotonic()
        self._growths = 0
        self._longest_pause = 0.0
        self._header: int | None = None  # bytes before the blocks (:data:`BLOCK_SECONDS`)

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
            if self._last is not None:
                if self._growths:
                    self._longest_pause = max(self._longest_pause, now - self._since)
                self._growths += 1
            self._last, self._since = state, now
        if self._header is None and state[0] >= MP4_BOX_HEADER:
            self._header = _leading_ftyp(self._path)
        over_budget = self._max_bytes is not None and state[0] >= self._max_bytes
        settle = self._settle
        if (state[0] - (self._header or 0)) % BLOCK_BYTES == 0:
            paced = max(BLOCK_SECONDS, BLOCK_PAUSES * self._longest_pause)
            settle = max(settle, paced if self._growths >= 2 else UNKNOWN_PACE_SECONDS)
        return stop.is_set() or now >= deadline or over_budget or now - self._since >= settle


def _leading_ftyp(path: Path) -> int:
    """The size of the ``ftyp`` box an MP4 starts with (under :data:`BLOCK_BYTES`), else 0."""
    try:
        with path.open("rb") as file:
            head = file.read(MP4_BOX_HEADER)
    except OSError:
        return 0
    size, kind = mp4_box(head)
    return size if kind == b"ftyp" and size < BLOCK_BYTES else 0
