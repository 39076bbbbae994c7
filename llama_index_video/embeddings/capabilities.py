"""What an embedding model can do, asked of any LlamaIndex embedding in one place.

The index, the ingest driver and the command line take any ``BaseEmbedding``; what
they need to know about it beyond LlamaIndex's interface is answered here, from what
the model itself declares, never from its class name:

- :func:`embeds_clips`: it embeds frames and video and audio clips natively (handed a
  :class:`~llama_index_video.reader.nodes.MediaText`, it embeds the media, not the
  description), so the reader cuts clips for it. A model declares it with the class
  attribute ``embeds_clips = True`` (:class:`GeminiMultimodalEmbedding` does).
- :func:`output_dimension`: the vector size it promises (``dimension`` or
  ``output_dimensionality``), if it declares one.
- :func:`node_embedder`: its ``try_embed_nodes``, which keeps failures per node
  instead of failing the batch, if it has one.
- :func:`usage`: its count of requests and items (``usage``), if it keeps one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import BaseNode

    from llama_index_video.embeddings.gemini_requests import EmbeddingUsage


def embeds_clips(model: BaseEmbedding | type[BaseEmbedding]) -> bool:
    """Whether ``model`` (or models of this class) embeds frames and clips natively."""
    return getattr(model, "embeds_clips", False) is True


def output_dimension(model: BaseEmbedding) -> int | None:
    """The vector size ``model`` declares; None if it declares none."""
    dimension = getattr(model, "dimension", None) or getattr(model, "output_dimensionality", None)
    return int(dimension) if dimension else None


def node_embedder(
    model: BaseEmbedding | None,
) -> Callable[[Sequence[BaseNode]], list[Any]] | None:
    """``model.try_embed_nodes`` (an outcome per node, failures kept); None without one
    (or without a model)."""
    return getattr(model, "try_embed_nodes", None)


def usage(model: BaseEmbedding) -> EmbeddingUsage | None:
    """What ``model`` has spent (requests, items, tokens, uploads); None if it keeps no count."""
    return getattr(model, "usage", None)
