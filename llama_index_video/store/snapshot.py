"""A private copy of the index folder as the last finished writer left it.

A long-lived reader (``serve``) that reads the folder in place shares it with the
writers: Chroma's SQLite rows change under its loaded vector index (a filtered query
then asks that index for ids it never loaded: chromadb's ``Error finding id``), a
reload in the middle of a run loads a writer's half-done state (rows of a file being
replaced already deleted, vector index files being rewritten), and opening Chroma is
itself a write (it applies the write log, and may store its vector index again). So
such a reader reads a *snapshot*: the manifest, ``chroma/`` and ``lexical/`` copied to a
private temporary folder, with ``media`` a link to the folder's own media. Nobody else
ever writes there, so what it serves is one complete version, consistent by
construction, until it moves to the next one.

A snapshot is only taken between writers, and only kept if it is one writer's finished
state: the write generation (:mod:`llama_index_video.store.lock`) is read before and
after the copy and must be the same finished generation both times; a writer that
took the lock meanwhile (its record names it, or its generation is another) makes the
copy worthless, and it is deleted. A folder no writer has finished (generation 0: one
being made, or being removed once its lock file is gone) is never copied. SQLite files
are copied with SQLite's backup API (a manifest's committed ``-wal`` pages included),
the rest byte for byte. A read-only folder is copied the same way: the copy is the
reader's own.

A copy is as big as the index, so none outlives its reader: the reader deletes it when
it moves on or closes, and at exit; and since a reader killed with ``-9`` (or by the
out-of-memory killer) runs no code, each copy's folder holds an ``owner.lock`` its
reader keeps locked (``flock``, released by the kernel however the process ends). The
first copy a process takes deletes every copy whose owner is gone. Copies made before
readers locked an ``owner.lock`` have none; one is deleted when it is ours by its name
and its layout, older than :data:`UNLOCKED_COPY_AGE`, and no process of this user has
a file of it open (its reader keeps Chroma's database open while it reads; Linux's
``/proc`` tells; elsewhere such copies are left alone).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import logging
import os
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from llama_index_video.store.collection import release_chroma
from llama_index_video.store.folder import CHROMA_FOLDER, MANIFEST_FILE, IndexFolder
from llama_index_video.store.lexical import LEXICAL_FOLDER
from llama_index_video.store.lock import read_generation
from llama_index_video.store.manifest import connect_read_only
from llama_index_video.store.media_paths import MEDIA_FOLDER

logger = logging.getLogger(__name__)

SQLITE_SUFFIXES = (".sqlite", ".sqlite3")
"""Files copied through SQLite's backup API rather than byte for byte."""
PREFIX = "llama-index-video-snapshot-"
OWNER_LOCK = "owner.lock"
UNLOCKED_COPY_AGE = 3600.0
"""Seconds after which a copy without an ``owner.lock`` that nobody holds open is one
an earlier version left (a copy is made in seconds, and locked as it is made)."""


@dataclass(frozen=True)
class Snapshot:
    """A private copy of an index folder: ``folder`` opens as that index did at
    write generation ``generation``."""

    folder: Path
    generation: int
    owner: int
    """The open descriptor of the copy's locked ``owner.lock``."""

    def discard(self) -> None:
        """Delete the copy (close what was opened from it first)."""
        release_chroma(self.folder / CHROMA_FOLDER)
        shutil.rmtree(self.folder.parent, ignore_errors=True)
        with contextlib.suppress(OSError):  # closed already: discarded twice
            os.close(self.owner)


def take_snapshot(index_dir: Path) -> Snapshot | None:
    """A snapshot of the index folder ``index_dir``; None while a writer holds its lock
    (or one was interrupted, until the next writer finishes), when one took the lock
    during the copy, or when none has finished there: the caller keeps what it has and
    tries again later.

    Raises:
        OSError, sqlite3.Error: the folder could not be read (the copy is deleted).
    """
    generation = read_generation(index_dir)
    if not generation:  # 0: no writer finished here (a folder being made, or being removed)
        return None
    _sweep_once()
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    target = root / "index"
    try:
        owner = _own(root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        target.mkdir()
        _copy(index_dir / MANIFEST_FILE, target / MANIFEST_FILE)
        for name in (CHROMA_FOLDER, LEXICAL_FOLDER):
            if (index_dir / name).is_dir():
                _copy_tree(index_dir / name, target / name)
        (target / MEDIA_FOLDER).symlink_to(IndexFolder(index_dir).media.absolute())
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        os.close(owner)
        raise
    if read_generation(index_dir) != generation:
        logger.debug("%s: a writer started while it was copied; copy dropped", index_dir)
        shutil.rmtree(root, ignore_errors=True)
        os.close(owner)
        return None
    return Snapshot(target, generation, owner)


def _own(root: Path) -> int:
    """Lock ``root``'s ``owner.lock`` for this process; the open descriptor. Locked
    under another name, then renamed: a sweep never sees the file unlocked."""
    claim = root / f".{OWNER_LOCK}"
    fd = os.open(claim, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        claim.rename(root / OWNER_LOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


@functools.cache
def _sweep_once() -> None:
    """Delete the copies whose reader is gone (once per process)."""
    unlocked = []
    for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            fd = os.open(root / OWNER_LOCK, os.O_RDONLY)
        except OSError:  # no owner.lock: being made, an earlier version's, or not ours
            if _left_unlocked(root):
                unlocked.append(root)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its reader is alive
            os.close(fd)
            continue
        try:
            shutil.rmtree(root, ignore_errors=True)
            logger.debug("deleted %s, left by a reader that was killed", root)
        finally:
            os.close(fd)
    held = _held_open(unlocked)
    for root in unlocked:
        if root not in held:
            shutil.rmtree(root, ignore_errors=True)
            logger.debug("deleted %s, left by an earlier version's reader", root)


def _left_unlocked(root: Path) -> bool:
    """Whether ``root``, which has no ``owner.lock``, is a copy an earlier version made
    (this user's, an index inside, neither locked nor changed for a long time)."""
    try:
        stat = root.lstat()
    except OSError:
        return False
    return (
        root.is_dir()
        and not root.is_symlink()
        and stat.st_uid == os.getuid()
        and time.time() - stat.st_mtime > UNLOCKED_COPY_AGE
        and not (root / f".{OWNER_LOCK}").exists()
        and (root / "index" / MANIFEST_FILE).is_file()
    )


def _held_open(roots: list[Path]) -> set[Path]:
    """Those of ``roots`` a process of this user has a file open in (all of them where
    that cannot be known: no ``/proc``)."""
    if not roots:
        return set()
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return set(roots)
    inside = {f"{os.path.realpath(root)}{os.sep}": root for root in roots}
    held: set[Path] = set()
    for process in proc.iterdir():  # ends: one listing
        if not process.name.isdigit():
            continue
        try:
            if process.stat().st_uid != os.getuid():
                continue
            descriptors = list((process / "fd").iterdir())
        except FileNotFoundError:  # ended meanwhile
            continue
        except OSError:  # a process of this user that cannot be looked into
            return set(roots)
        for descriptor in descriptors:
            try:
                target = os.readlink(descriptor)
            except OSError:  # closed meanwhile
                continue
            held.update(root for start, root in inside.items() if target.startswith(start))
    return held


def _copy_tree(source: Path, target: Path) -> None:
    target.mkdir()
    for path in sorted(source.iterdir()):
        if path.is_dir():
            _copy_tree(path, target / path.name)
        elif path.suffix in SQLITE_SUFFIXES:
            _copy(path, target / path.name)
        elif not path.name.endswith(("-wal", "-shm", "-journal")):
            shutil.copyfile(path, target / path.name)


def _copy(source: Path, target: Path) -> None:
    """Copy the SQLite database ``source`` as of its last commit."""
    db, _immutable = connect_read_only(source, probe="SELECT count(*) FROM sqlite_master")
    try:
        copy = sqlite3.connect(target)
        try:
            db.backup(copy)
        finally:
            copy.close()
    finally:
        db.close()
