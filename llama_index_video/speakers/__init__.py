"""Who spoke when: diarization backends behind one :class:`Diarizer` protocol.

:class:`ResemblyzerDiarizer` works offline (its weights ship in its wheel);
:class:`PyannoteDiarizer` runs a pyannote-audio pipeline from the model hub.
Both need ``pip install 'llama-index-video[speakers]'`` (pyannote also
``pip install pyannote.audio``).
"""

from llama_index_video.speakers.base import Diarizer, SpeakerTimeline, SpeakerTurn
from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer
from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

__all__ = [
    "Diarizer",
    "PyannoteDiarizer",
    "ResemblyzerDiarizer",
    "SpeakerTimeline",
    "SpeakerTurn",
]
