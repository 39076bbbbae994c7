"""Embedding models: the local default, multilingual ones, Gemini's multimodal embedding,
CLIP for frames."""

from llama_index_video.embeddings.local import (
    DEFAULT_LOCAL_MODEL,
    MULTILINGUAL_MODEL,
    local_embedding,
)

__all__ = ["DEFAULT_LOCAL_MODEL", "MULTILINGUAL_MODEL", "local_embedding"]
