"""Speech and subtitles to timed text: the :class:`Transcriber` protocol and its backends.

- :class:`FasterWhisperTranscriber`: the default (CTranslate2, int8 on CPU, VAD on);
  :func:`resolve_model` finds its model by name, folder or installed offline package.
- :class:`OpenAIWhisperTranscriber`: the reference ``whisper`` package (extra ``whisper``).
- :func:`find_subtitles` / :func:`load_subtitles`: sidecar or embedded subtitles instead of ASR.

The backends' heavy dependencies are imported only when a transcriber is built or used.
"""

from llama_index_video.transcription.base import (
    SAMPLE_RATE,
    Segment,
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

__all__ = [
    "DEFAULT_MODEL",
    "SAMPLE_RATE",
    "Cue",
    "FasterWhisperTranscriber",
    "OpenAIWhisperTranscriber",
    "ResolvedModel",
    "Segment",
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
