"""Search and answer questions over video and audio in LlamaIndex, cited to the second.

The public names are imported on first use, so ``import llama_index_video`` (and the
command line's ``--help``) stays fast; optional dependencies load only when needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports
from llama_index_video._version import __version__

_EXPORTS: dict[str, str] = {
    "VideoReader": "llama_index_video.reader.video_reader",
    "ReadResult": "llama_index_video.reader.video_reader",
    "ReaderOptions": "llama_index_video.reader.options",
    "FrameNode": "llama_index_video.reader.nodes",
    "ClipNode": "llama_index_video.reader.nodes",
    "UnitOptions": "llama_index_video.reader.units",
    "FrameSamplingOptions": "llama_index_video.media.frames",
    "probe": "llama_index_video.media.probe",
    "MediaInfo": "llama_index_video.media.probe",
    "Transcriber": "llama_index_video.transcription.base",
    "Segment": "llama_index_video.transcription.base",
    "Word": "llama_index_video.transcription.base",
    "FasterWhisperTranscriber": "llama_index_video.transcription.faster",
    "OpenAIWhisperTranscriber": "llama_index_video.transcription.openai_whisper",
    "TimestampFramePostprocessor": "llama_index_video.postprocessing.timestamp_frame",
    "MomentNode": "llama_index_video.postprocessing.timestamp_frame",
    "VideoRetriever": "llama_index_video.search.retriever",
    "VideoIndex": "llama_index_video.index",
    "SearchHit": "llama_index_video.results",
    "ContextSpan": "llama_index_video.results",
    "Answer": "llama_index_video.results",
    "Citation": "llama_index_video.results",
    "VideoSearcher": "llama_index_video.search.searcher",
    "ClaudeMultimodalLLM": "llama_index_video.answering.claude",
    "GeminiMultimodalLLM": "llama_index_video.answering.gemini_llm",
    "VideoAnswerer": "llama_index_video.answering.answerer",
    "AskOptions": "llama_index_video.answering.answerer",
    "EmbeddingSpec": "llama_index_video.embeddings.spec",
    "ClipOptions": "llama_index_video.reader.clips",
    "VideoNodeParser": "llama_index_video.reader.ingestion_pipeline",
    "media_documents": "llama_index_video.reader.ingestion_pipeline",
    "GeminiMultimodalEmbedding": "llama_index_video.embeddings.gemini",
    "VideoIndexError": "llama_index_video.errors",
    "MediaError": "llama_index_video.errors",
    "MissingDependencyError": "llama_index_video.errors",
    "UnsupportedMediaError": "llama_index_video.errors",
    "MediaDecodeError": "llama_index_video.errors",
    "TranscriptionError": "llama_index_video.errors",
    "UnsupportedLanguageError": "llama_index_video.errors",
    "EmbeddingError": "llama_index_video.errors",
    "RemoteAPIError": "llama_index_video.errors",
    "IndexCompatibilityError": "llama_index_video.errors",
    "AnswerError": "llama_index_video.errors",
    "VectorStoreError": "llama_index_video.errors",
    "RayExecutor": "llama_index_video.executor.ray",
    "IndexStorageError": "llama_index_video.errors",
    "IndexBusyError": "llama_index_video.errors",
    "IndexCorruptError": "llama_index_video.errors",
    "IndexReadOnlyError": "llama_index_video.errors",
    "DiskFullError": "llama_index_video.errors",
    "DiarizationError": "llama_index_video.errors",
    "DownloadError": "llama_index_video.errors",
    "Diarizer": "llama_index_video.speakers.base",
    "CampplusDiarizer": "llama_index_video.speakers.campplus_diarizer",
    "ResemblyzerDiarizer": "llama_index_video.speakers.resemblyzer_diarizer",
    "PyannoteDiarizer": "llama_index_video.speakers.pyannote_diarizer",
    "local_embedding": "llama_index_video.embeddings.local",
    "VIDEO_QA_TEMPLATE": "llama_index_video.answering.prompts",
    "VideoToolSpec": "llama_index_video.agents.tool_spec",
    "MomentRequestError": "llama_index_video.errors",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from llama_index_video.agents.tool_spec import VideoToolSpec
    from llama_index_video.answering.answerer import AskOptions, VideoAnswerer
    from llama_index_video.answering.claude import ClaudeMultimodalLLM
    from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM
    from llama_index_video.answering.prompts import VIDEO_QA_TEMPLATE
    from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
    from llama_index_video.embeddings.local import local_embedding
    from llama_index_video.embeddings.spec import EmbeddingSpec
    from llama_index_video.errors import (
        AnswerError,
        DiarizationError,
        DiskFullError,
        DownloadError,
        EmbeddingError,
        IndexBusyError,
        IndexCompatibilityError,
        IndexCorruptError,
        IndexReadOnlyError,
        IndexStorageError,
        MediaDecodeError,
        MediaError,
        MissingDependencyError,
        MomentRequestError,
        RemoteAPIError,
        TranscriptionError,
        UnsupportedLanguageError,
        UnsupportedMediaError,
        VectorStoreError,
        VideoIndexError,
    )
    from llama_index_video.executor.ray import RayExecutor
    from llama_index_video.index import VideoIndex
    from llama_index_video.media.frames import FrameSamplingOptions
    from llama_index_video.media.probe import MediaInfo, probe
    from llama_index_video.postprocessing.timestamp_frame import (
        MomentNode,
        TimestampFramePostprocessor,
    )
    from llama_index_video.reader.clips import ClipOptions
    from llama_index_video.reader.ingestion_pipeline import VideoNodeParser, media_documents
    from llama_index_video.reader.nodes import ClipNode, FrameNode
    from llama_index_video.reader.options import ReaderOptions
    from llama_index_video.reader.units import UnitOptions
    from llama_index_video.reader.video_reader import ReadResult, VideoReader
    from llama_index_video.results import Answer, Citation, ContextSpan, SearchHit
    from llama_index_video.search.retriever import VideoRetriever
    from llama_index_video.search.searcher import VideoSearcher
    from llama_index_video.speakers.base import Diarizer
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
    from llama_index_video.transcription.base import Segment, Transcriber, Word
    from llama_index_video.transcription.faster import FasterWhisperTranscriber
    from llama_index_video.transcription.openai_whisper import OpenAIWhisperTranscriber


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
