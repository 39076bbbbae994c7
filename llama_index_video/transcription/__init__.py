"""Speech and subtitles to timed text: the :class:`Transcriber` protocol and its backends.

- :class:`FasterWhisperTranscriber`: the default (CTranslate2, int8 on CPU, VAD on);
  :func:`resolve_model` finds its model by name, folder or installed offline package.
- :class:`OpenAIWhisperTranscriber`: the reference ``whisper`` package (extra ``whisper``).
- :func:`find_subtitles` / :func:`load_subtitles`: sidecar or embedded subtitles instead of ASR.
- :class:`Speech`: what a whole source said, joined from the chunks it was heard in.

The backends' heavy dependencies are imported only when a transcriber is built or used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from llama_index_video.transcription.base import (
    SAMPLE_RATE,
    Segment,
    Speech,
    Transcriber,
    Transcription,
    TranscriptionInfo,
    Word,
)

if TYPE_CHECKING:
    from llama_index_video.transcription.faster import FasterWhisperTranscriber
    from llama_index_video.transcription.models import (
        DEFAULT_MODEL,
        ResolvedModel,
        offline_model_path,
        resolve_model,
    )
    from llama_index_video.transcription.openai_whisper import OpenAIWhisperTranscriber
    from llama_index_video.transcription.subtitles import (
        Cue,
        SubtitleSource,
        find_subtitles,
        load_subtitles,
        merge_rolling_cues,
    )
    from llama_index_video.weights import model_cache_dir

# Loaded on first use, so that what only needs the data types (search, the reader's
# unit building) does not import PyAV or a speech backend.
_LAZY = {
    "FasterWhisperTranscriber": "llama_index_video.transcription.faster",
    "DEFAULT_MODEL": "llama_index_video.transcription.models",
    "ResolvedModel": "llama_index_video.transcription.models",
    "offline_model_path": "llama_index_video.transcription.models",
    "resolve_model": "llama_index_video.transcription.models",
    "OpenAIWhisperTranscriber": "llama_index_video.transcription.openai_whisper",
    "Cue": "llama_index_video.transcription.subtitles",
    "SubtitleSource": "llama_index_video.transcription.subtitles",
    "find_subtitles": "llama_index_video.transcription.subtitles",
    "load_subtitles": "llama_index_video.transcription.subtitles",
    "merge_rolling_cues": "llama_index_video.transcription.subtitles",
    "model_cache_dir": "llama_index_video.weights",
}

__all__ = [
    "DEFAULT_MODEL",
    "SAMPLE_RATE",
    "Cue",
    "FasterWhisperTranscriber",
    "OpenAIWhisperTranscriber",
    "ResolvedModel",
    "Segment",
    "Speech",
    "SubtitleSource",
    "Transcriber",
    "Transcription",
    "TranscriptionInfo",
    "Word",
    "find_subtitles",
    "load_subtitles",
    "merge_rolling_cues",
    "model_cache_dir",
    "offline_model_path",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llama_index_video.transcription' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
