"""Identity: content hashes for files and deterministic node ids.

Ids derive from the file's bytes, not its path, so ingesting the same file twice
gives the same ids and a moved or renamed file is recognised.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

_BLOCK = 1 << 20


def content_hash(path: str | Path) -> str:
    """Hex sha256 of the file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
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
