"""An embedding computed on this machine answers LlamaIndex's async calls by running its
sync hooks in a worker thread, so an event loop is never blocked while the model runs."""

from __future__ import annotations

import asyncio

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding


class ThreadedEmbedding(BaseEmbedding):
    """The async hooks of a local model: its ``_get_*`` hooks, each in a worker thread."""

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)
