"""Media paths in an index folder: stored relative to the folder, resolved against it.

Nodes carry the paths of the files an index writes in its ``media/`` folder: a frame's
``image_path`` (on the node and in its metadata, also on the ``ocr`` nodes read from
it) and a clip's resource path. The reader makes them as ``media_dir`` says, often
relative to the working directory (``video_index/media/frames/...``), which no longer
resolves from another directory; an absolute path would point at the old place once
the folder is moved or copied. So the vector store keeps paths inside the index
folder relative to it (``media/frames/<hash16>_<ms>.jpg``), and paths outside it (a
reader writing media elsewhere) absolute.

Written in one place: :class:`~llama_index_video.store.folder_index.FolderVectorStoreIndex`
(and its multimodal twin) turns
the embedded copies of the nodes into their stored form just before they reach the
vector store, so the embedding models still read the files by the paths the reader
made. Read in two: :class:`~llama_index_video.search.retriever.VideoRetriever` resolves
the nodes it returns and the ``TimestampFramePostprocessor`` the frames it attaches,
so everything after retrieval (search hits, ``ask`` images, clips) holds absolute
paths that resolve from any working directory.

Indexes written before this change hold paths as the reader made them: absolute ones
stay absolute; a relative one that does not resolve against the index folder keeps
its old meaning (relative to the working directory); and a frame or clip found at
neither place is looked for by its name in this folder's ``media/`` (the folder was
moved, or the old path was relative to another working directory).

A folder whose ``media`` is a symbolic link (a long-lived reader's private copy of the
index, :mod:`llama_index_video.store.snapshot`) resolves media paths to where the link
leads: the index folder's own media, never the private copy's name for it.

Sources are the user's files, wherever they keep them: the manifest records them by
their absolute path. Files downloaded from links are the exception, as they live in
the folder's ``media/downloads``: :func:`resolved_source` finds them in this folder's
downloads once the folder has moved (or been copied), whatever the manifest recorded.

Only paths here, no LlamaIndex: the manifest reads its sources through this module, and
a command that reads only the manifest (``list``, ``clip``) starts without LlamaIndex.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from llama_index_video.media.names import CLIPS_FOLDER, FRAMES_FOLDER

MEDIA_FOLDER: Final = "media"
"""The index folder's media folder: frames, clips and downloads."""
MEDIA_SUBFOLDERS: Final = (FRAMES_FOLDER, CLIPS_FOLDER)
"""Where the reader writes frames and clips, inside the media folder."""
DOWNLOADS_FOLDER: Final = "downloads"
"""Where files downloaded from links are saved, inside the media folder."""


def stored_path(path: str | Path, folder: Path) -> str:
    """How the index folder ``folder`` stores ``path`` (as the reader made it).

    Relative to ``folder`` (POSIX separators) when the file is inside it, else absolute.
    """
    absolute, root = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    if not absolute.is_relative_to(root):  # a symlink on the way to one of them
        absolute, root = absolute.resolve(), folder.resolve()
    if absolute.is_relative_to(root):
        return absolute.relative_to(root).as_posix()
    return os.path.abspath(path)


def _media_home(folder: Path) -> Path:
    """The folder whose ``media`` a path of ``folder`` names (see the module docstring)."""
    link = folder / MEDIA_FOLDER
    return Path(os.readlink(link)).parent if link.is_symlink() else folder


def resolved_path(stored: str, folder: Path) -> str:
    """The absolute path of a media file the index folder ``folder`` stored as ``stored``.

    See the module docstring for paths written by earlier versions. A file found
    nowhere keeps the path it would have (so the caller can say it is missing).
    """
    path = Path(stored)
    if path.is_absolute():
        if path.exists():
            return stored
    else:
        folder = _media_home(folder)
        inside = folder / path
        if inside.exists():
            return os.path.abspath(inside)
        if path.exists():  # an earlier version's path, relative to the working directory
            return os.path.abspath(path)
    if path.parent.name in MEDIA_SUBFOLDERS:  # an earlier version's path, folder moved
        by_name = folder / MEDIA_FOLDER / path.parent.name / path.name
        if by_name.exists():
            return os.path.abspath(by_name)
    return stored if path.is_absolute() else os.path.abspath(folder / path)


def resolved_source(recorded: str, folder: Path) -> str:
    """Where the source file the manifest of ``folder`` recorded as ``recorded`` is now.

    A download (``.../media/downloads/<name>``) is this folder's file of that name when
    there is one, so it follows the folder; any other path is the file it names.
    Returned in the manifest's form, resolved (symlinks followed), so that it is
    also the key this file is recorded under when ingested from here.
    """
    path = Path(recorded)
    if path.parent.name == DOWNLOADS_FOLDER and path.parent.parent.name == MEDIA_FOLDER:
        here = folder / MEDIA_FOLDER / DOWNLOADS_FOLDER / path.name
        if here.is_file():
            return str(here.resolve())
    return recorded
