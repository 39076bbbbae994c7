"""Embedding models: the local default, multilingual ones, Gemini's multimodal embedding,
CLIP for frames.

- :mod:`.local`: the default all-MiniLM-L6-v2 (ONNX, or sentence-transformers);
  :mod:`.onnx`, :mod:`.multilingual` and :mod:`.sentencepiece` run them without torch;
- :mod:`.gemini` (with :mod:`.gemini_inputs`, :mod:`.gemini_requests`): Gemini Embedding 2
  for text, frames and clips; :mod:`.clip`: frames by their pixels;
- :mod:`.spec`: which embedding built an index; :mod:`.identity`: a model's stable name;
  :mod:`.capabilities`: what a model can do, from what it declares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.embeddings.local import (
        DEFAULT_LOCAL_MODEL,
        MULTILINGUAL_MODEL,
        local_embedding,
    )

_EXPORTS: dict[str, str] = {
    "DEFAULT_LOCAL_MODEL": "llama_index_video.embeddings.local",
    "MULTILINGUAL_MODEL": "llama_index_video.embeddings.local",
    "local_embedding": "llama_index_video.embeddings.local",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
