"""Finding and running the ``ffmpeg`` executable.

Decoding goes through PyAV everywhere else; only writing new media files (clip
cutting) shells out to ``ffmpeg``. The binary is the one on ``PATH`` if there is
one, else the static build shipped inside the ``imageio-ffmpeg`` wheel, so
``pip install 'llama-index-video[gemini]'`` is enough on a machine without ffmpeg.
Commands are argument lists, never shell strings: file names with spaces, quotes
or non-ASCII characters reach ffmpeg unchanged.
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from llama_index_video.errors import MediaError, MissingDependencyError

logger = logging.getLogger(__name__)

_STDERR_TAIL = 600  # characters of ffmpeg's stderr kept in error messages


@functools.cache
def ffmpeg_executable() -> str:
    """The ffmpeg binary: ``ffmpeg`` on PATH, else the one bundled with ``imageio-ffmpeg``.

    Raises:
        MissingDependencyError: neither is available.
    """
    on_path = shutil.which("ffmpeg")
    if on_path:
        return on_path
    try:
        import imageio_ffmpeg

        exe: str = imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError) as exc:  # not installed, or no binary for this platform
        raise MissingDependencyError(
            "imageio-ffmpeg", "gemini", "Cutting clips without ffmpeg on PATH"
        ) from exc
    logger.debug("using the ffmpeg bundled with imageio-ffmpeg: %s", exe)
    return exe


def run_ffmpeg(args: Sequence[str], *, source: Path, timeout: float | None = None) -> None:
    """Run an ffmpeg command line (an argument list, never a shell string).

    Args:
        args: The full command, starting with the executable.
        source: The input file, named in the error if ffmpeg fails.
        timeout: Seconds before the process is killed.

    Raises:
        MediaError: ffmpeg exited with an error or timed out; the message carries
            the end of its stderr.
    """
    logger.debug("running %s", args)
    try:
        completed = subprocess.run(
            list(args), capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise MediaError(source, f"ffmpeg did not finish within {timeout:.0f} s") from exc
    if completed.returncode != 0:
        tail = completed.stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
        raise MediaError(source, f"ffmpeg failed (exit {completed.returncode}): {tail}")
