"""Where an export is written, and how it reaches its name without harming anything.

Every file this package writes for a user (``clip``, ``ask --export``, the page's
"download this moment", their ``.srt`` beside, ``transcript -o``) goes through
:func:`written`:

- refused, before anything is opened for writing, when the output *is* one of the
  recordings read: the same file by device and inode (``os.stat``), so a symlink or a
  hard link to the source counts, whatever path names it; for an output that does not
  exist yet, the resolved paths are compared;
- refused when it is a folder, a device or a pipe, or its folder does not exist;
- written under a temporary name in the output's own folder (``.NAME.XXXX.partial.EXT``:
  the same file system, and the suffix that picks the container) and renamed onto the
  output with :func:`os.replace` only when complete and flushed to disk. A process
  killed meanwhile leaves the old file (or none) under the output's name, never a
  truncated one; a failure deletes the temporary file. A file replaced keeps its
  permission bits (an export kept private, or shared with a group, stays so). What a
  killed export left is deleted by the next export to that folder
  (:func:`remove_stale_partials`): hidden files of exactly that naming pattern,
  untouched for :data:`STALE_AFTER_SECONDS`.

The bytes go through a Python file object, not a file name handed to FFmpeg: FFmpeg's
own writer records a failed write (a full disk) and carries on, leaving a truncated
file behind an export that reports success; a Python file raises. Failures of the
output (no such format, no space, no permission) are :class:`MediaError` naming the
output, not the recording.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import av

from llama_index_video.errors import MediaError, printable_path

logger = logging.getLogger(__name__)

PARTIAL_MARK = ".partial"
"""In the temporary name of an export being written (``.talk.1f2e3d4c.partial.mp4``)."""

PARTIAL_NAME = re.compile(rf"\..+\.[0-9a-f]{{8}}{re.escape(PARTIAL_MARK)}(\.[^.]+)?")
"""The whole name of an export's temporary file (``secrets.token_hex(4)``: 8 hex digits)."""

STALE_AFTER_SECONDS = 60.0
"""A temporary export file unchanged this long was left by a killed export: an export
writes to its file all the while it runs."""


@contextmanager
def written(output: Path, *, sources: Iterable[Path]) -> Iterator[BinaryIO]:
    """A file to write ``output``'s bytes into; it becomes ``output`` when the block ends.

    Args:
        output: Where the export goes (a symlink is followed: its target is replaced).
        sources: The recordings read to make it; none of them may be ``output``.

    Raises:
        MediaError: naming ``output``: it is one of ``sources``, a folder, a device, in
            a folder that does not exist or may not be written, or the disk filled up.
            An ``OSError`` raised inside the block (a failed write) becomes one too.
    """
    target = _checked(output, list(sources))
    remove_stale_partials(target.parent)
    try:
        replaced: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        replaced = None
    partial = target.with_name(
        f".{target.stem}.{secrets.token_hex(4)}{PARTIAL_MARK}{target.suffix}"
    )
    try:
        handle = partial.open("xb")
    except OSError as exc:
        raise output_error(output, exc) from exc
    try:
        with handle:
            if replaced is not None:
                os.fchmod(handle.fileno(), replaced)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except OSError as exc:
        if not _is_output_failure(exc):
            raise
        raise output_error(output, exc) from exc
    finally:
        partial.unlink(missing_ok=True)


def remove_stale_partials(folder: Path) -> list[Path]:
    """Delete the temporary files killed exports left in ``folder``: regular files named
    as :func:`written` names them and unchanged for :data:`STALE_AFTER_SECONDS`. An
    export still running keeps writing to its file, so it is never one of them; a file
    that cannot be deleted is left (logged). Returns the files deleted."""
    removed: list[Path] = []
    try:
        names = [entry for entry in os.scandir(folder) if PARTIAL_NAME.fullmatch(entry.name)]
    except OSError:
        return removed
    deadline = time.time() - STALE_AFTER_SECONDS
    for entry in names:
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < deadline:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError as exc:
            logger.debug("%s: a stale export file left as it is: %s", entry.path, exc)
    return removed


def write_text(output: Path, text: str, *, sources: Iterable[Path]) -> None:
    """Write ``text`` (UTF-8) to ``output`` as :func:`written` does: never onto one of
    ``sources``, complete or not at all.

    Raises:
        MediaError: naming ``output`` (see :func:`written`).
    """
    with written(output, sources=sources) as handle:
        handle.write(text.encode("utf-8"))


def output_error(output: Path, exc: OSError) -> MediaError:
    """``exc``, raised while writing ``output``, as one line naming ``output``."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return MediaError(output, "no space left to write it; free some space or write elsewhere")
    reason = (exc.strerror or str(exc)).lower()
    return MediaError(output, f"cannot be written ({reason}); choose another output file")


def _is_output_failure(exc: OSError) -> bool:
    """Whether ``exc`` is the output's: PyAV reports the recordings' failures as its own
    errors (``av.FFmpegError``, also ``OSError``s), the output's come from its file."""
    return not isinstance(exc, av.FFmpegError)


def _checked(output: Path, sources: list[Path]) -> Path:
    """The file to replace (``output``, its symlinks followed), once it may be written."""
    try:
        mode = output.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise output_error(output, exc) from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise MediaError(output, "is a folder; name a file inside it, e.g. moment.mp4")
    if mode is not None and not stat.S_ISREG(mode):
        raise MediaError(output, "is not a regular file (a device or a pipe); name a file")
    target = Path(os.path.realpath(output))
    if not target.parent.is_dir():
        raise MediaError(output, f"its folder {printable_path(target.parent)} does not exist")
    for source in sources:
        if _same_file(output, target, source):
            raise MediaError(
                output,
                f"is the recording being exported ({printable_path(source)}); writing it "
                "would destroy it: choose another output file",
            )
    return target


def _same_file(output: Path, target: Path, source: Path) -> bool:
    try:
        return os.path.samestat(output.stat(), source.stat())
    except OSError:  # the output (or the source) does not exist: compare where they lead
        return target == Path(os.path.realpath(source))
