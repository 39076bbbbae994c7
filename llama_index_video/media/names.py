"""Names of the files an index keeps in its media folder, and of its sub-folders,
defined once.

Every frame and clip of a source starts with :func:`source_prefix` of its content hash,
so a source's files are found (and removed) by that prefix alone, and the service can
accept a frame name only if it has exactly the shape written here.
"""

from __future__ import annotations

import re
from typing import Final

FRAMES_FOLDER: Final = "frames"
"""Where the reader writes frames, inside the media folder."""
CLIPS_FOLDER: Final = "clips"
"""Where the reader writes clips, inside the media folder."""
PREFIX_LENGTH: Final = 16
FRAME_NAME: Final = re.compile(rf"([0-9a-f]{{{PREFIX_LENGTH}}})_[0-9]{{9}}\.jpg")
"""A frame file name; group 1 is the source prefix."""


def source_prefix(content_hash: str) -> str:
    """The start of every media file name written for the source with this content hash."""
    return content_hash[:PREFIX_LENGTH]


def source_files_glob(content_hash: str) -> str:
    """A glob (relative to the media folder) matching every file written for the source."""
    return f"**/{source_prefix(content_hash)}_*"


def frame_name(prefix: str, time: float) -> str:
    """``<prefix>_<milliseconds>.jpg`` for the frame shown at ``time`` seconds."""
    return f"{prefix}_{_milliseconds(time)}.jpg"


def clip_name(content_hash: str, modality: str, start: float, end: float, extension: str) -> str:
    """``<prefix>_<modality>_<start ms>-<end ms>.<extension>`` for one clip."""
    return (
        f"{source_prefix(content_hash)}_{modality}_"
        f"{_milliseconds(start)}-{_milliseconds(end)}.{extension}"
    )


def _milliseconds(seconds: float) -> str:
    return f"{round(seconds * 1000):09d}"
