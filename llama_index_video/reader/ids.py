"""Identity: content hashes for files and deterministic node ids.

Ids derive from the file's bytes, not its path, so ingesting the same file twice
gives the same ids and a moved or renamed file is recognised. What distinguishes two
nodes of a file (their kind and times) can coincide, e.g. two transcript units of the
same span when a model squeezed words to zero length, and a store refuses a batch with
a repeated id; :class:`NodeIds` makes every id of one read unique by construction.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import Counter
from pathlib import Path

_BLOCK = 1 << 20


def content_hash(path: str | Path, length: int | None = None) -> str:
    """Hex sha256 of the file's bytes (its first ``length``, if given), read in 1 MiB
    blocks."""
    digest = hashlib.sha256()
    left = length
    with Path(path).open("rb") as handle:
        while block := handle.read(_BLOCK if left is None else min(_BLOCK, left)):
            digest.update(block)
            if left is not None:
                left -= len(block)
    return digest.hexdigest()


def document_id(file_hash: str) -> str:
    """The ``ref_doc_id`` shared by every node of one file."""
    return stable_id(file_hash, "document")


def stable_id(file_hash: str, *parts: object) -> str:
    """A UUID-formatted id from the file hash and what distinguishes the node within it."""
    key = ":".join([file_hash, *(str(part) for part in parts)])
    return str(uuid.UUID(hex=hashlib.sha256(key.encode()).hexdigest()[:32]))


def millis(seconds: float) -> int:
    """Seconds as whole milliseconds, the resolution ids and file names use."""
    return round(seconds * 1000)


class NodeIds:
    """The node ids of one read of one file, unique by construction.

    The first node with given parts gets :func:`stable_id` of them, as before; the n-th
    repeat of the same parts gets the id of the parts plus ``repeat n``, so ids stay
    deterministic (the same file read the same way gives the same ids) and distinct.
    """

    def __init__(self, file_hash: str) -> None:
        self.file_hash = file_hash
        self._seen: Counter[tuple[str, ...]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, *parts: object) -> str:
        """A new id for a node distinguished by ``parts`` (e.g. ``"transcript", 0, 900``)."""
        key = tuple(str(part) for part in parts)
        with self._lock:
            repeat = self._seen[key]
            self._seen[key] += 1
        if repeat:
            return stable_id(self.file_hash, *key, f"repeat {repeat}")
        return stable_id(self.file_hash, *key)
