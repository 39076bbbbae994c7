"""Which files an ingest reads: folders walked for supported files, and why a path
cannot be ingested (not valid UTF-8, an unsupported type, unreadable, not a regular
file), said in one line."""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Iterable, Iterator
from pathlib import Path

from llama_index_video.errors import printable_path
from llama_index_video.reader.options import SUPPORTED_SUFFIXES


def expand_paths(
    paths: Iterable[str | Path],
    unreadable: list[tuple[Path, str]] | None = None,
    passed_over: list[Path] | None = None,
) -> Iterator[Path]:
    """Files as given, and the supported files inside folders, recursively and sorted.

    A folder (or sub-folder) that cannot be listed, or an entry in it named like a
    supported file that is not one (a symlink loop, a named pipe), is appended to
    ``unreadable`` with the reason, and a file inside a folder whose type is not read
    (a PDF beside the recordings) to ``passed_over``, instead of being skipped silently.
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            yield path
            continue
        found: list[Path] = []

        def note(error: OSError, root: Path = path) -> None:
            where = Path(error.filename) if error.filename else root
            if unreadable is not None:
                unreadable.append((where, f"folder cannot be read ({error.strerror or error})"))

        for folder, folders, files in os.walk(path, onerror=note):
            folders[:] = [name for name in folders if not name.startswith(".")]
            for name in files:
                if name.startswith("."):
                    continue
                if Path(name).suffix.lower() in SUPPORTED_SUFFIXES:
                    found.append(Path(folder, name))
                elif passed_over is not None:
                    passed_over.append(Path(folder, name))
        for found_path in sorted(found):
            if found_path.is_file():
                yield found_path
            elif unreadable is not None:
                why = input_stat(found_path)
                unreadable.append((found_path, why if isinstance(why, str) else "not a file"))


def input_stat(path: Path) -> os.stat_result | str:
    """The status of a file an ingest can read, else why it cannot (one line)."""
    if printable_path(path) != str(path):
        return "file name is not valid UTF-8; rename it"
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        return f"unsupported file type '{path.suffix or path.name}'"
    try:
        stat = path.stat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not stat_module.S_ISREG(stat.st_mode):
        return f"not a regular file ({_file_kind(stat.st_mode)})"
    return stat


def _file_kind(mode: int) -> str:
    kinds = {
        stat_module.S_ISFIFO: "a named pipe",
        stat_module.S_ISSOCK: "a socket",
        stat_module.S_ISCHR: "a character device",
        stat_module.S_ISBLK: "a block device",
        stat_module.S_ISDIR: "a folder",
    }
    return next((name for test, name in kinds.items() if test(mode)), "a special file")
