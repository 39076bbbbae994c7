"""One-shot readers between writers: every command that reads the index once and exits
(``search``, ``ask``, ``transcript``, ``chapters``, ``summarize``) reads through
:func:`read_between_writers`.

Such a command reads the folder in place, while a writer may be replacing a file in it:
Chroma's rows change under its loaded vector index (chromadb's ``Error finding id``),
the store holds fewer rows than the manifest lists for a moment (taken for damage), or
the writer finishes during the read. The write generation
(:mod:`llama_index_video.store.lock`) tells which: read before and after, it is the same
finished generation when no writer touched the folder. Otherwise the command reloads
the index and reads again, a bounded number of times. (``serve`` and ``mcp``, which
read for long, read a private snapshot instead: :mod:`llama_index_video.store.snapshot`;
copying the folder for every one-shot command would cost more than it waits.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from llama_index_video.errors import VideoIndexError

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex

logger = logging.getLogger(__name__)
T = TypeVar("T")


class Folder(Protocol):
    """Anything read from an index folder (a ``VideoIndex``, a ``FolderView``)."""

    @property
    def path(self) -> Path: ...


READ_ATTEMPTS = 5
"""How often a one-shot reader reads again when a writer changed the folder under it."""
READ_PAUSE_SECONDS = 1.0


def read_between_writers(index: VideoIndex, read: Callable[[], T]) -> T:
    """``read()`` from ``index``'s folder, again (reloaded) when a writer changed it
    meanwhile: Chroma's rows changed under its loaded vector index (chromadb's ``Error
    finding id``), a half-done state taken for damage, or a writer finished during the
    read. At most :data:`READ_ATTEMPTS` reads; a failure while no writer touched the
    folder is raised at once. ``read`` must take everything it uses from ``index`` anew
    each time (the reload replaces its stores), and never return None.

    Raises:
        VideoIndexError: writers kept changing the folder through every attempt.
    """
    for attempt in range(READ_ATTEMPTS):
        result = read_once(index, read)
        if result is not None:
            return result
        logger.info("%s: a writer changed the folder during the read; reading again", index.path)
        if attempt + 1 < READ_ATTEMPTS:
            time.sleep(READ_PAUSE_SECONDS)
            index.reopen()
    raise VideoIndexError(
        f"{index.path}: another process kept writing to the folder through {READ_ATTEMPTS} "
        "reads; try again when it is done"
    )


def read_once(index: Folder, read: Callable[[], T]) -> T | None:
    """``read()`` from ``index``'s folder; None when a writer changed the folder during
    it, so that it must be read again (see :func:`read_between_writers`), or when
    ``read()`` returned None. A failure while no writer touched the folder is raised."""
    from llama_index_video.store.lock import caused_by_a_writer, read_generation

    before = read_generation(index.path)
    try:
        result = read()
    except Exception as exc:
        unchanged = before is not None and read_generation(index.path) == before
        if unchanged or not caused_by_a_writer(exc):
            raise
        return None
    if before is None or read_generation(index.path) == before:
        return result
    return None
