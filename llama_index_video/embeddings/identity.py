"""A stable name for an embedding's vector space, recorded in an index to refuse mixing models.

The name is ``family:model@dimension``. Runtimes that give the same vectors for the
same model share a family: sentence-transformers on torch (LlamaIndex's
``HuggingFaceEmbedding``) and its ONNX export (:class:`OnnxSentenceEmbedding`) are both
``sentence-transformers``, whatever the weights' precision (the int8 export's vectors
have a cosine of 0.9995 typically with the float32 model's, 0.996 at worst; see
``tests/embeddings/test_onnx.py``). Indexes made by 0.1.0 recorded the runtime's class
name, ``HuggingFaceEmbedding``; :func:`canonical_identity` reads it as its family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video.embeddings.capabilities import output_dimension
from llama_index_video.weights import offline_model_name

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

SENTENCE_TRANSFORMERS = "sentence-transformers"
TRANSFORMERS_CLIP = "transformers-clip"
E5_EMBEDDING = "MultilingualE5Embedding"
"""The id of the multilingual-e5-small embedding (its ``class_name()``)."""
_FAMILIES = {
    "HuggingFaceEmbedding": SENTENCE_TRANSFORMERS,
    "OnnxSentenceEmbedding": SENTENCE_TRANSFORMERS,
    "VideoClipEmbedding": TRANSFORMERS_CLIP,
    # 0.1.0 named this package's CLIP embedding "ClipEmbedding", the id of LlamaIndex's
    # own; a recorded "ClipEmbedding:..." is read as this package's, as 0.1.0 meant it.
    "ClipEmbedding": TRANSFORMERS_CLIP,
}


def embedding_identity(model: BaseEmbedding) -> str:
    """``family:model_name@dimension``; an offline package's copy goes by the model's name."""
    family = _FAMILIES.get(model.class_name(), model.class_name())
    name = str(getattr(model, "model_name", "") or "unknown")
    if family == SENTENCE_TRANSFORMERS:
        name = offline_model_name(SENTENCE_TRANSFORMERS, name) or name
    dimension = output_dimension(model)
    suffix = f"@{dimension}" if dimension else ""
    return f"{family}:{name}{suffix}"


def canonical_identity(recorded: str) -> str:
    """An identity as recorded by any version, in the form :func:`embedding_identity` gives."""
    runtime, separator, rest = recorded.partition(":")
    return f"{_FAMILIES.get(runtime, runtime)}{separator}{rest}"
