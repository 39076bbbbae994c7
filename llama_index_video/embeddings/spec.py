"""Which embedding an index folder uses, recorded so that it reopens with the same one.

``ingest --embed gemini`` and ``search`` run in different processes; the index
stores an :class:`EmbeddingSpec` (never a key) in its manifest, and ``VideoIndex``
rebuilds the model from it when opened without an explicit embedding.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from llama_index_video.embeddings import capabilities
from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, local_embedding

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

Backend = Literal["local", "gemini"]
DEFAULT_GEMINI_MODEL = "gemini-embedding-2"


@dataclass(frozen=True, kw_only=True)
class EmbeddingSpec:
    """How to build an embedding model: backend, model name and its settings.

    Attributes:
        backend: ``"local"`` (all-MiniLM-L6-v2 on ONNX, the multilingual
            ``MULTILINGUAL_MODEL``, or a sentence-transformers model) or ``"gemini"``.
        model: Model name; None for the backend's default. ``ingest --embed
            multilingual`` records ``EmbeddingSpec(model=MULTILINGUAL_MODEL)``.
        dimension: Output dimensionality (Gemini only; 128-3072, default 1536).
        batch_api: Embed through Gemini's Batch API (half price, slower).
    """

    backend: Backend = "local"
    model: str | None = None
    dimension: int | None = None
    batch_api: bool = False

    def __post_init__(self) -> None:
        if self.backend not in ("local", "gemini"):
            raise ValueError(f"unknown embedding backend {self.backend!r}; use local or gemini")
        if self.backend == "local" and (self.dimension is not None or self.batch_api):
            raise ValueError("dimension and batch_api apply to the gemini backend only")

    @property
    def multimodal(self) -> bool:
        """Whether the model embeds clips and frames natively (its class says so)."""
        if self.backend == "local":
            return False  # text models, whichever runtime
        from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding

        return capabilities.embeds_clips(GeminiMultimodalEmbedding)

    def build(self) -> BaseEmbedding:
        """The embedding model (Gemini reads its key from the environment)."""
        if self.backend == "local":
            return local_embedding(self.model or DEFAULT_LOCAL_MODEL)
        from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding

        settings: dict[str, Any] = {}
        if self.dimension is not None:
            settings["output_dimensionality"] = self.dimension
        return GeminiMultimodalEmbedding(
            model_name=self.model or DEFAULT_GEMINI_MODEL, use_batch_api=self.batch_api, **settings
        )

    def to_json(self) -> str:
        """The spec as an index folder records it."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> EmbeddingSpec:
        """The spec an index folder recorded (the text :meth:`to_json` wrote)."""
        return cls(**json.loads(text))
