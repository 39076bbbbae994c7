"""The rows of a recording indexed while it is still being written (``ingest --live``).

A growing file has no content hash yet, so its chunks are stored under a *live key*:
a hash of its resolved path and its first bytes (a new recording written to the same
path gets another key). The key is recorded in the manifest like a content: status
``indexed`` with the rows stored so far and, as duration, where the last stored chunk
ends, so each chunk is searchable as soon as it is committed and a killed run resumes
from there. Its path record has no size (``-1``), so the ingest of the finished file
always reads it again, and replaces the live rows the way a changed file's rows are
replaced: the new content is indexed, the path moved to it, then the key forgotten.

A chunk is written in three steps: its node ids are noted in the manifest, its rows
added, then the count, the end, the recording's settled language and the cleared note
committed together. A run killed between them leaves the note, and the next run deletes
those rows before going on, so nothing is stored twice.

The settled language (:mod:`llama_index_video.transcription.recording_language`) is a
manifest note beside the chunk's, ``live-language:<key>``, so a resumed run hears its
next chunk as the killed one would have. An index written before it was kept has no
such note: its recording resumes with no settled language. Both notes are for resuming:
once the finished file has replaced the live rows they are deleted (:meth:`LiveRows.finish`).

When the live rows take a path that held another content (an earlier recording at the
same path), that content is forgotten as a changed file's old content is, unless another
path holds it: its moments described what the path held before, and, no path naming
them, they stayed searchable after the final ingest.

A recording stopped with Ctrl-C is ingested as far as it went, but it may not be over:
``live-stopped:<key>`` notes that content, the file's size then, a hash of those bytes
and the settled language. Followed again while its file has only grown since (its first
bytes are the same), it goes on from the end of that content, which stays searchable
until the finished file replaces it, and is forgotten then. A file that changed
otherwise (a recorder that rewrites its header, a new recording) is followed from its
start, the stopped content forgotten as an earlier recording's is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.reader.ids import content_hash
from llama_index_video.store.collection import content_nodes
from llama_index_video.store.manifest import Manifest, PathRecord

if TYPE_CHECKING:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import BaseNode

    from llama_index_video.store.lexical import LexicalStore

LIVE_NOTE = "live"
"""The ``notes`` of a recording whose chunks are still being added."""
HEAD_BYTES = 64 * 1024
"""How many first bytes of a growing file go into its live key."""


@dataclass(frozen=True)
class Stored:
    """How far a recording's live rows go.

    Attributes:
        until: Where the last stored chunk ends (0.0: none).
        settled: The language the recording was settled in after that chunk; None before
            one was heard decisively, or when the rows were stored before it was kept.
    """

    until: float = 0.0
    settled: str | None = None


@dataclass(frozen=True)
class Stopped:
    """A recording stopped with Ctrl-C, as the ingest of its file so far left it.

    Attributes:
        content: The content that ingest indexed.
        size: The file's size then, in bytes.
        head: :func:`~llama_index_video.reader.ids.content_hash` of those bytes.
        settled: The language the recording was settled in, if any.
    """

    content: str
    size: int
    head: str
    settled: str | None


STOPPED_NOTE = "live-stopped:"
"""The manifest notes of recordings a Ctrl-C stopped, by live key (:class:`Stopped`)."""


def stopped_contents(manifest: Manifest) -> set[str]:
    """The contents a stopped recording's next run goes on from: no path names them
    while that run's live rows hold the path, yet they are kept."""
    return {json.loads(note)["content"] for note in manifest.meta_values(STOPPED_NOTE)}


def live_key(path: Path, head: bytes) -> str:
    """The key a growing file's rows are stored under, from its path and first bytes."""
    return hashlib.sha256(b"live\0" + str(path.resolve()).encode() + b"\0" + head).hexdigest()


class LiveRows:
    """Chunks of one growing file, added to an index (the caller holds its writer lock).

    ``forget`` forgets a content, its rows deleted at the next commit step (the
    ingestor's ``remove``).
    """

    def __init__(
        self,
        index: VectorStoreIndex,
        manifest: Manifest,
        lexical: LexicalStore | None,
        *,
        path: Path,
        key: str,
        forget: Callable[[str], None],
    ) -> None:
        self._index = index
        self._manifest = manifest
        self._lexical = lexical
        self._forget = forget
        self.path = path
        self.key = key
        self._unfinished = f"live-chunk:{key}"
        self._language = f"live-language:{key}"
        self._stopped = f"{STOPPED_NOTE}{key}"

    def stored(self) -> Stored:
        """How far the stored chunks go, after undoing a chunk left half written by a
        killed run."""
        noted = self._manifest.get_meta(self._unfinished)
        if noted:
            self._index.vector_store.delete_nodes(json.loads(noted))
            if self._lexical is not None:
                self._lexical.delete_content(self.key)
                self._lexical.add(content_nodes(self._index.vector_store, self.key))
            self._manifest.set_meta(self._unfinished, "")
        record = self._manifest.file(self.key)
        if record is None:
            return self._going_on()
        if record.status != "indexed" or record.notes != LIVE_NOTE:
            return Stored()
        return Stored(record.duration or 0.0, self._manifest.get_meta(self._language) or None)

    def add(self, nodes: Sequence[BaseNode], *, until: float, settled: str | None) -> None:
        """Store one chunk's nodes (those of the media up to ``until`` seconds), and the
        language the recording is settled in after it."""
        record = self._manifest.file(self.key)
        count = record.node_count if record is not None else 0
        if record is None:
            self._forget_held()
            with self._manifest.transaction():
                self._manifest.set_file(self.key, "indexed", duration=0.0, notes=LIVE_NOTE)
                self._manifest.set_path(
                    PathRecord(str(self.path.resolve()), str(self.path), self.key, -1, -1)
                )
        self._manifest.set_meta(self._unfinished, json.dumps([n.node_id for n in nodes]))
        if nodes:
            self._index.insert_nodes(nodes)
            if self._lexical is not None:
                self._lexical.add(nodes)
        with self._manifest.transaction():
            self._manifest.set_file(
                self.key, "indexed", node_count=count + len(nodes), duration=until, notes=LIVE_NOTE
            )
            self._manifest.set_meta(self._language, settled or "")
            self._manifest.set_meta(self._unfinished, "")

    def finish(self, *, stopped: bool = False) -> bool:
        """Delete the recording's notes once its live rows are gone (the ingest of the
        whole file replaced them); while they are still listed (that ingest failed), they
        stay for the next run to resume from. ``stopped``: it ended by Ctrl-C, and is
        noted so (see the module docstring).

        Returns:
            Whether the content an earlier stop left, which this recording went on from,
            was forgotten (its rows are deleted in the caller's commit step).
        """
        record = self._manifest.file(self.key)
        if record is not None and record.notes == LIVE_NOTE:
            return False
        earlier = self._stopped_before()
        held = self._held()
        note = None
        if stopped and held is not None:
            size = self.path.stat().st_size
            settled = self._manifest.get_meta(self._language) or None
            stop = Stopped(held.content_hash, size, content_hash(self.path, size), settled)
            note = json.dumps(asdict(stop))
        with self._manifest.transaction():
            self._manifest.forget_meta(self._unfinished)
            self._manifest.forget_meta(self._language)
            if note is None:
                self._manifest.forget_meta(self._stopped)
            else:
                self._manifest.set_meta(self._stopped, note)
        return earlier is not None and self._forget_unheld(earlier.content)

    def _going_on(self) -> Stored:
        """Where a recording with no live rows yet starts: after the content a stop left,
        if its file has only grown since; else at 0, and that note is dropped (with its
        content, if no path names it any more: an ingest replaced the live rows that
        went on from it)."""
        stopped = self._stopped_before()
        if stopped is None:
            return Stored()
        held = self._held()
        if held is not None and held.content_hash == stopped.content:
            record = self._manifest.file(stopped.content)
            grown = self.path.stat().st_size >= stopped.size
            if (
                record is not None
                and record.status == "indexed"
                and grown
                and content_hash(self.path, stopped.size) == stopped.head
            ):
                return Stored(record.duration or 0.0, stopped.settled)
        self._manifest.forget_meta(self._stopped)
        self._forget_unheld(stopped.content)
        return Stored()

    def _forget_held(self) -> None:
        """Forget the content this path held before, unless another path holds it or the
        recording goes on from it (forgotten at the end then, see :meth:`finish`)."""
        held = self._held()
        if held is None:
            return
        stopped = self._stopped_before()
        if stopped is None or stopped.content != held.content_hash:
            self._forget_unheld(held.content_hash, but=held.path)

    def _forget_unheld(self, content: str, *, but: str | None = None) -> bool:
        """Forget ``content`` if no path (none but ``but``) holds it; whether it was."""
        if not self._manifest.held_by_no_path(content, but=but):
            return False
        self._forget(content)
        return True

    def _held(self) -> PathRecord | None:
        """What this path names, if not the live rows."""
        held = self._manifest.path(str(self.path.resolve()))
        return None if held is None or held.content_hash == self.key else held

    def _stopped_before(self) -> Stopped | None:
        noted = self._manifest.get_meta(self._stopped)
        return Stopped(**json.loads(noted)) if noted else None
