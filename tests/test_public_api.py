"""The public surface is pinned: removing or renaming a name is a breaking change."""

from __future__ import annotations

import subprocess
import sys

import llama_index_video
from tests_support import ROOT

EXPECTED = {
    "__version__",
    "Answer",
    "AskOptions",
    "ClipOptions",
    "EmbeddingSpec",
    "GeminiMultimodalLLM",
    "VideoAnswerer",
    "Citation",
    "ClaudeMultimodalLLM",
    "ClipNode",
    "ContextSpan",
    "FasterWhisperTranscriber",
    "FrameNode",
    "FrameSamplingOptions",
    "GeminiMultimodalEmbedding",
    "MediaError",
    "MediaInfo",
    "MissingDependencyError",
    "MomentNode",
    "OpenAIWhisperTranscriber",
    "ReadResult",
    "ReaderOptions",
    "SearchHit",
    "Segment",
    "TimestampFramePostprocessor",
    "Transcriber",
    "UnitOptions",
    "VideoIndex",
    "VideoIndexError",
    "VideoToolSpec",
    "MomentRequestError",
    "VideoReader",
    "VideoRetriever",
    "VideoSearcher",
    "Word",
    "probe",
    "local_embedding",
    "VIDEO_QA_TEMPLATE",
    "UnsupportedLanguageError",
    "UnsupportedMediaError",
    "MediaDecodeError",
    "TranscriptionError",
    "EmbeddingError",
    "RemoteAPIError",
    "IndexCompatibilityError",
    "AnswerError",
    "VectorStoreError",
    "RayExecutor",
    "IndexStorageError",
    "IndexBusyError",
    "IndexCorruptError",
    "IndexReadOnlyError",
    "DiskFullError",
    "VideoNodeParser",
    "media_documents",
    "DiarizationError",
    "DownloadError",
    "Diarizer",
    "CampplusDiarizer",
    "ResemblyzerDiarizer",
    "PyannoteDiarizer",
}


def test_all_is_pinned():
    assert set(llama_index_video.__all__) == EXPECTED


def test_every_public_name_is_lazily_importable():
    assert set(llama_index_video.__all__) - {"__version__"} == set(llama_index_video._EXPORTS)


def test_every_public_name_resolves():
    for name in llama_index_video.__all__:
        assert getattr(llama_index_video, name) is not None, name


def test_import_is_light():
    code = "import sys, llama_index_video; print('torch' in sys.modules, 'av' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_readme_examples_need_no_deep_import():
    readme = (ROOT / "README.md").read_text()
    deep = [line for line in readme.splitlines() if line.startswith("from llama_index_video.")]
    assert deep == []


# What VideoIndex offers, whichever module of the facade defines it (index.py,
# querying.py, recordings.py, naming.py, writing.py, verifying.py): a name here may
# not disappear; a new public member is added here.
VIDEO_INDEX_MEMBERS = {
    "aask",
    "answerer",
    "as_query_engine",
    "as_retriever",
    "asearch",
    "ask",
    "changed_on_disk",
    "chapters",
    "check_store",
    "close",
    "cut",
    "ingest",
    "join",
    "library",
    "locate",
    "name_speaker",
    "postprocessor",
    "prune",
    "reader",
    "recording",
    "recording_scores",
    "relabel_speakers",
    "remove",
    "reopen",
    "screen",
    "search",
    "search_policy",
    "summarize",
    "transcript",
    "transcript_file",
    "verify",
    "where",
}


def test_video_index_keeps_its_public_members():
    from llama_index_video.index import VideoIndex

    public = {name for name in dir(VideoIndex) if not name.startswith("_")}
    assert VIDEO_INDEX_MEMBERS - public == set()
