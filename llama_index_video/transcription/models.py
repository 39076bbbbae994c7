"""Find the faster-whisper (CTranslate2) model folder to load.

A model is given by folder or by name. A :class:`~pathlib.Path`, or a string naming
an existing folder, is used as it is once it is seen to hold ``model.bin`` and
``config.json``; a string that is also a model name (``"base"``) names the folder only
when it is written as a path (``"./base"``) or the folder holds a model, so a folder of
the user's that happens to be called ``base`` in the working directory is not taken for
the multilingual model. A name (``"tiny.en"``, ``"base"``, ``"small"``, or a Hugging Face
repository id such as ``"Systran/faster-whisper-small"``) resolves to the first of:

1. a copy already in the Hugging Face cache (``download_root`` if given), so a model the
   user downloaded once is what they get;
2. weights shipped in an installed pip package, so a fresh install works offline
   (:mod:`llama_index_video.weights` says which: ``tiny.en`` and the multilingual ``base``);
3. a download from the Hugging Face Hub by faster-whisper itself, unless
   ``allow_download=False``.

When all three fail (offline, nothing cached, no package), :class:`TranscriptionError`
names the model and the fix instead of the Hub's ``LocalEntryNotFoundError``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from llama_index_video.errors import TranscriptionError
from llama_index_video.transcription.openmp import import_faster_whisper
from llama_index_video.weights import offline_weights

logger = logging.getLogger(__name__)

DEFAULT_MODEL: Final = "tiny.en"
MULTILINGUAL_MODEL: Final = "base"
"""The multilingual model that identifies languages for, and transcribes what cannot be
written by, an English-only model (its weights ship in a package, see
:mod:`llama_index_video.weights`)."""
ModelSource = Literal["folder", "hf-cache", "offline-package", "hub"]

_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
_MODEL_FILES: Final = ("model.bin", "config.json")


@dataclass(frozen=True)
class ResolvedModel:
    """A model folder ready for ``WhisperModel``, and where it came from."""

    name: str
    """The name asked for, or the folder's name when a folder was given."""
    path: Path
    source: ModelSource
    package: str | None = None
    """The pip package(s) the weights came from, when ``source`` is ``"offline-package"``."""


def check_model_reference(model: str | Path) -> None:
    """Check, without touching disk or network beyond a stat, that ``model`` can be resolved.

    Raises:
        TranscriptionError: ``model`` is a path that is not a folder, or a string that is
            neither a folder, a known faster-whisper name nor a Hub repository id.
    """
    if isinstance(model, Path) or _names_folder(model):
        folder = Path(model).expanduser()
        if not folder.is_dir():
            raise TranscriptionError(
                f"faster-whisper model folder {folder} does not exist: pass an existing "
                f"folder holding model.bin and config.json, or a model name such as "
                f"{DEFAULT_MODEL!r}"
            )
        return
    if model in _known_names() or _REPO_ID.match(model):
        return
    raise TranscriptionError(
        f"unknown faster-whisper model {model!r}: use one of {', '.join(_known_names())}, "
        f"a Hugging Face repository id, or the path of a model folder"
    )


def resolve_model(
    model: str | Path = DEFAULT_MODEL,
    *,
    download_root: Path | None = None,
    allow_download: bool = True,
) -> ResolvedModel:
    """Find the folder of a faster-whisper model, following the module's resolution rule.

    Args:
        model: A model name, a Hub repository id, or a model folder.
        download_root: Hugging Face cache folder to look in and download to (default: the
            standard Hub cache).
        allow_download: Whether a model missing locally may be downloaded.

    Returns:
        The folder to load and where it was found.

    Raises:
        TranscriptionError: The model is unknown, a given folder is not a CTranslate2
            model, or the model is nowhere on this machine and cannot be downloaded.
        MissingDependencyError: faster-whisper is not installed.
    """
    check_model_reference(model)
    if isinstance(model, Path) or _names_folder(model):
        folder = Path(model).expanduser().resolve()
        _require_model_files(folder, str(model))
        return ResolvedModel(name=folder.name, path=folder, source="folder")

    download = _download_function()
    cache_dir = str(download_root) if download_root is not None else None
    try:
        cached = Path(download(model, local_files_only=True, cache_dir=cache_dir))
    except Exception as exc:  # the Hub raises several types for "not cached"
        logger.debug("faster-whisper model %r is not in the Hugging Face cache: %s", model, exc)
    else:
        if _has_model_files(cached):
            logger.info("Using faster-whisper model %r from the Hugging Face cache", model)
            return ResolvedModel(name=model, path=cached, source="hf-cache")

    offline = offline_weights("faster-whisper", model)
    path = offline.locate() if offline is not None else None
    if offline is not None and path is not None:
        package = " + ".join(offline.packages)
        logger.info("Using faster-whisper model %r from the %s package", model, package)
        return ResolvedModel(name=model, path=path, source="offline-package", package=package)

    fix = _missing_model_fix(model)
    if not allow_download:
        raise TranscriptionError(
            f"faster-whisper model {model!r} is not on this machine and downloading is "
            f"disabled (allow_download=False): {fix}"
        )
    try:
        logger.info("Downloading faster-whisper model %r from the Hugging Face Hub", model)
        downloaded = Path(download(model, local_files_only=False, cache_dir=cache_dir))
    except Exception as exc:  # network, HTTP and Hub errors all mean the same to the user
        raise TranscriptionError(
            f"faster-whisper model {model!r} is not on this machine and could not be "
            f"downloaded ({type(exc).__name__}: {_first_line(exc)}): {fix}"
        ) from exc
    _require_model_files(downloaded, model)
    return ResolvedModel(name=model, path=downloaded, source="hub")


def offline_model_path(name: str) -> Path | None:
    """The folder of ``name`` from installed offline weights packages, if there are any.

    Raises:
        TranscriptionError: A split model cannot be assembled (for example the cache
            folder is not writable).
    """
    offline = offline_weights("faster-whisper", name)
    return offline.locate() if offline is not None else None


def _download_function() -> Callable[..., str]:
    download_model: Callable[..., str] = import_faster_whisper().utils.download_model
    return download_model


def _known_names() -> list[str]:
    return list(import_faster_whisper().utils.available_models())


def _names_folder(model: str) -> bool:
    """Whether ``model`` refers to a folder rather than a name (the module docstring)."""
    if _looks_like_path(model):
        return True
    folder = Path(model).expanduser()
    if not folder.is_dir():
        return False
    return _has_model_files(folder) or not (model in _known_names() or _REPO_ID.match(model))


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1


def _missing_model_fix(model: str) -> str:
    offline = offline_weights("faster-whisper", model)
    hint = f"install its offline weights ({offline.install}), " if offline else ""
    return (
        f"{hint}connect to the internet once so faster-whisper can download it, "
        f"or pass the path of a local model folder"
    )


def _has_model_files(folder: Path) -> bool:
    return all((folder / name).is_file() for name in _MODEL_FILES)


def _require_model_files(folder: Path, model: str) -> None:
    if not _has_model_files(folder):
        raise TranscriptionError(
            f"{folder} (model {model!r}) is not a faster-whisper model folder: it needs "
            f"{' and '.join(_MODEL_FILES)}; convert a Whisper checkpoint with "
            f"ct2-transformers-converter or pass a model name such as {DEFAULT_MODEL!r}"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"
