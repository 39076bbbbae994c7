"""Who spoke when: diarization backends behind one :class:`Diarizer` protocol.

:class:`ResemblyzerDiarizer` works offline (its weights ship in its wheel);
:class:`PyannoteDiarizer` runs a pyannote-audio pipeline from the model hub.
Both need ``pip install 'llama-index-video[speakers]'`` (pyannote also
``pip install pyannote.audio``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from llama_index_video.speakers.base import Diarizer, SpeakerTimeline, SpeakerTurn

if TYPE_CHECKING:
    from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

# The backends load on first use: what only reads speaker labels (search) skips their
# clustering and audio stacks.
_BACKENDS = {
    "PyannoteDiarizer": "llama_index_video.speakers.pyannote_diarizer",
    "ResemblyzerDiarizer": "llama_index_video.speakers.resemblyzer_diarizer",
}

__all__ = [
    "Diarizer",
    "PyannoteDiarizer",
    "ResemblyzerDiarizer",
    "SpeakerTimeline",
    "SpeakerTurn",
]


def __getattr__(name: str) -> Any:
    module = _BACKENDS.get(name)
    if module is None:
        raise AttributeError(f"module 'llama_index_video.speakers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
