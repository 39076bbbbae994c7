"""Speech and subtitles to timed text: the :class:`Transcriber` protocol and its backends.

- :class:`FasterWhisperTranscriber`: the default (CTranslate2, int8 on CPU, VAD on);
  :func:`resolve_model` finds its model by name, folder or installed offline package.
- :class:`OpenAIWhisperTranscriber`: the reference ``whisper`` package (extra ``whisper``).
- :func:`find_subtitles` / :func:`load_subtitles`: sidecar or embedded subtitles instead of ASR.
- :class:`Speech`: what a whole source said, joined from the chunks it was heard in.

The backends' heavy dependencies are imported only when a transcriber is built or used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.transcription.base import (
        SAMPLE_RATE,
        Segment,
        Speech,
        Transcriber,
        Transcription,
        TranscriptionInfo,
        Word,
    )
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

_EXPORTS: dict[str, str] = {
    "SAMPLE_RATE": "llama_index_video.transcription.base",
    "Segment": "llama_index_video.transcription.base",
    "Speech": "llama_index_video.transcription.base",
    "Transcriber": "llama_index_video.transcription.base",
    "Transcription": "llama_index_video.transcription.base",
    "TranscriptionInfo": "llama_index_video.transcription.base",
    "Word": "llama_index_video.transcription.base",
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

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
