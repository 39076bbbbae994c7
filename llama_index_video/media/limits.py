"""How long one clip may be: Gemini Embedding 2's limits per input, defined once.

The clip cutter, the reader's clip options, the Gemini input checks and the command
line's help all read these numbers from here. This module imports nothing, so the
command line can show them without loading the media stack.
"""

from __future__ import annotations

from typing import Final

#: Longest media the model takes in one input, in seconds.
MAX_SECONDS: Final[dict[str, float]] = {"video": 120.0, "audio": 80.0}
#: A safer video window when the clips keep their audio track.
VIDEO_WITH_AUDIO_SECONDS: Final = 80.0
#: Default ``(max_seconds, overlap_seconds)`` per modality.
DEFAULT_WINDOWS: Final[dict[str, tuple[float, float]]] = {
    "video": (MAX_SECONDS["video"], 10.0),
    "audio": (MAX_SECONDS["audio"], 5.0),
}
#: Shortest clip window a user may ask for, in seconds.
MIN_WINDOW_SECONDS: Final = 5.0
