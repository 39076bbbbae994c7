"""The page's "download this moment": one moment of an indexed recording cut to a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.recordings import moment_file_name

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex


def cut_moment(index: VideoIndex, source: str, start: float, end: float) -> tuple[Path, str]:
    """A temporary file holding ``[start, end]`` of ``source`` (the caller deletes it),
    and the name to download it as. Only a recording the index lists can be named.

    Raises:
        MomentRequestError: an unknown source, times outside it, a span over the
            moment limit (:data:`~llama_index_video.recordings.MAX_MOMENT_SECONDS`).
        MediaError: the recording cannot be cut.
    """
    recording = index.recording(source)
    shared = moment_file_name(recording, start, end)
    handle, name = tempfile.mkstemp(suffix=Path(shared).suffix, prefix="moment-")
    os.close(handle)
    Path(name).unlink()  # PyAV writes it; only the unique name was wanted
    output = Path(name)
    try:
        index.cut(recording, start, end, output)
    except BaseException:
        output.unlink(missing_ok=True)
        raise
    return output, shared
