"""VideoIndex builds its own reader from ReaderOptions; clips follow its embedding."""

from __future__ import annotations

import pytest

from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.reader.clips import ClipOptions
from llama_index_video.reader.options import ReaderOptions
from llama_index_video.reader.video_reader import VideoReader
from tests_support import HANDBOOK


@pytest.fixture
def gemini_key(monkeypatch):
    """A key, so the Gemini model can be built; nothing here calls the API."""
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-for-construction-only")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def test_the_index_reads_with_its_options(tmp_path, embed_model):
    options = ReaderOptions(frames=FrameSamplingOptions(interval=2.0), ocr="off")
    index = VideoIndex(tmp_path / "index", embed_model=embed_model, reader_options=options)
    try:
        reader = index.reader
        assert reader.media_dir == tmp_path / "index" / "media"
        assert reader.frames == FrameSamplingOptions(interval=2.0)
        assert reader.ocr is None
        assert reader.clips is None  # a text embedding gets no clips
        assert index.reader is reader  # built once
        assert index.ingest([HANDBOOK]).ok
    finally:
        index.close()


def test_a_multimodal_index_cuts_clips_without_being_told(tmp_path, gemini_key):
    index = VideoIndex(
        tmp_path / "index",
        embed_model=EmbeddingSpec(backend="gemini"),
        reader_options=ReaderOptions(ocr="off"),
    )
    assert index.multimodal
    assert index.reader.clips == ClipOptions()
    index.close()

    windows = ClipOptions(video_seconds=60, video_overlap=5)
    index = VideoIndex(
        tmp_path / "index",
        embed_model=EmbeddingSpec(backend="gemini"),
        reader_options=ReaderOptions(ocr="off", clips=windows),
    )
    assert index.reader.clips == windows
    index.close()


def test_a_gemini_model_passed_as_a_model_also_gets_clips(tmp_path, gemini_key):
    from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding

    index = VideoIndex(tmp_path / "index", embed_model=GeminiMultimodalEmbedding())
    assert index.multimodal
    assert index.reader.clips == ClipOptions()
    index.close()


def test_the_stored_embedding_decides_when_reopened(tmp_path, gemini_key):
    path = tmp_path / "index"
    created = VideoIndex(path, embed_model=EmbeddingSpec(backend="gemini"), snapshot_reads=False)
    created._record_identity()  # what the first ingest does before reading, in place
    created.close()
    reopened = VideoIndex(path, reader_options=ReaderOptions(ocr="off"))
    assert reopened.reader.clips == ClipOptions()
    reopened.close()


def test_clip_windows_for_a_text_embedding_are_refused(tmp_path, embed_model):
    with pytest.raises(ValueError, match="embeds text only"):
        VideoIndex(
            tmp_path / "index",
            embed_model=embed_model,
            reader_options=ReaderOptions(clips=ClipOptions(video_seconds=60)),
        )


def test_a_ready_reader_or_options_not_both(tmp_path, embed_model):
    reader = VideoReader(media_dir=tmp_path / "elsewhere", ocr="off")
    index = VideoIndex(tmp_path / "index", embed_model=embed_model, reader=reader)
    assert index.reader is reader
    index.close()
    with pytest.raises(ValueError, match="not both"):
        VideoIndex(
            tmp_path / "index",
            embed_model=embed_model,
            reader=reader,
            reader_options=ReaderOptions(),
        )


def test_assigning_the_reader_still_works_for_one_release_with_a_warning(tmp_path, embed_model):
    index = VideoIndex(tmp_path / "index", embed_model=embed_model)
    reader = VideoReader(media_dir=tmp_path / "index" / "media", ocr="off")
    with pytest.warns(DeprecationWarning, match="reader_options"):
        index.reader = reader
    assert index.reader is reader
    index.close()
