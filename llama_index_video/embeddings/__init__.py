"""Embedding models: the local default, Gemini's multimodal embedding, CLIP for frames."""

from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, local_embedding

__all__ = ["DEFAULT_LOCAL_MODEL", "local_embedding"]
