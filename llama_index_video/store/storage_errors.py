"""What the disk and the databases said, as the package's errors.

The manifest (SQLite), Chroma (SQLite and segment files, through a Rust binding whose
errors carry SQLite's text) and the frames written beside them report the same few
conditions in their own words and types. They are translated here, once, into one line
that names the file, says what is wrong and what to do:

- no space left, or the user's quota reached: :class:`DiskFullError`. Chroma's Rust
  core does not say so: on a full disk its writes fail, and every later read (which
  first applies pending writes) too, with ``Failed to apply logs to the metadata
  segment``. That failure is taken as a full disk when the disk holding the file has
  less than :data:`LOW_SPACE` bytes free, and left as it is otherwise;
- a read-only file system, or files this user may not write: :class:`IndexReadOnlyError`;
- a file that is not (or no longer) a database: :class:`IndexCorruptError`, with the
  way out: restore a backup, or for the files ``verify --repair`` rebuilds (the manifest,
  from the stored moments; the vector store, from the files the manifest lists) that
  command (:func:`repaired_by_verify`).

Anything else is left as it is, for the caller's own handling.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llama_index_video.errors import (
    DiskFullError,
    IndexCorruptError,
    IndexReadOnlyError,
    IndexStorageError,
)

REBUILD = "restore the index folder from a backup, or move it aside and ingest the same files again"
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
# SQLite's own words (also inside Chroma's errors), lower-cased.
_FULL_TEXT = ("database or disk is full", "no space left on device", "disk quota exceeded")
_READ_ONLY_TEXT = ("readonly database", "read-only file system", "permission denied")
_CORRUPT_TEXT = (
    "database disk image is malformed",
    "file is not a database",
    "file is encrypted or is not a database",
    "malformed database schema",
    "no such table",
)


LOW_SPACE = 64 * 1024 * 1024
"""Free bytes below which a write Chroma could not apply is put down to a full disk."""
# Chroma's words for a write it could not apply to its files, lower-cased.
_UNAPPLIED_TEXT = ("failed to apply logs", "error in compaction")


def repaired_by_verify(index_folder: Path, rebuilt: str) -> str:
    """The way out for a damaged file ``verify --repair`` moves aside and rebuilds."""
    return (
        f"run 'llama-index-video verify --repair --index {index_folder}' to move it aside "
        f"and {rebuilt}"
    )


def storage_error(
    exc: BaseException, file: Path, *, advice: str = REBUILD
) -> IndexStorageError | None:
    """The package error for ``exc`` raised while using ``file``; None if it is none of these.
    ``advice`` is the way out said for a damaged file."""
    if isinstance(exc, IndexStorageError):
        return exc
    code = exc.errno if isinstance(exc, OSError) else None
    text = str(exc).lower()
    if code in _FULL_ERRNOS or any(words in text for words in _FULL_TEXT):
        return disk_full(file)
    if any(words in text for words in _UNAPPLIED_TEXT) and _free_bytes(file) < LOW_SPACE:
        return disk_full(file)
    if code in _READ_ONLY_ERRNOS or any(words in text for words in _READ_ONLY_TEXT):
        return read_only(file)
    corrupt = next((words for words in _CORRUPT_TEXT if words in text), None)
    if corrupt is not None:
        return IndexCorruptError(f"{file}: damaged ({corrupt}); {advice}")
    return None


def made_folder(folder: Path) -> None:
    """Make ``folder`` and its parents for an index, if they are not there yet.

    Raises:
        IndexStorageError: a file stands where it or a parent would be, or the file
            system makes no folder there (``/proc``); in one line naming it.
        OSError: anything else, for :func:`translated` (a read-only disk, a full one).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError, FileNotFoundError) as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise IndexStorageError(
            f"{folder}: no index folder can be made here ({reason}); choose another folder"
        ) from exc


def disk_full(file: Path) -> DiskFullError:
    return DiskFullError(
        f"{file}: disk full; free some space and run the same command again "
        "(the index keeps everything that was complete)"
    )


def _free_bytes(file: Path) -> int:
    """Free bytes on the disk holding ``file`` (or its nearest existing folder)."""
    for folder in [file, *file.absolute().parents]:
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            continue
    return LOW_SPACE


def read_only(file: Path) -> IndexReadOnlyError:
    return IndexReadOnlyError(
        f"{file}: read-only here (a read-only file system, or owned by another user); "
        "search and ask work; what changes it (ingest, verify --repair, speakers name) needs a "
        "writable index folder"
    )


@contextmanager
def translated(file: Path, *, advice: str = REBUILD) -> Iterator[None]:
    """Re-raise storage failures inside the block as the package's errors, naming ``file``
    (``advice``: the way out for a damaged one)."""
    try:
        yield
    except Exception as exc:
        error = storage_error(exc, file, advice=advice)
        if error is None or error is exc:
            raise
        raise error from exc
