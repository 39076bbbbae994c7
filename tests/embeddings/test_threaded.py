"""A local model's async calls run its sync hooks in a worker thread: the loop goes on."""

from __future__ import annotations

import asyncio
import threading
import time

from llama_index_video.embeddings.threaded import ThreadedEmbedding


class _SlowEmbedding(ThreadedEmbedding):
    """Takes 0.2 s a call and notes the thread it ran on."""

    def _vector(self) -> list[float]:
        time.sleep(0.2)
        return [float(threading.get_ident())]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [self._vector() for _ in texts]


def test_the_loop_keeps_running_while_a_local_model_embeds():
    model = _SlowEmbedding()

    async def embed_and_tick() -> tuple[list[list[float]], int, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            for _ in range(10):
                await asyncio.sleep(0.01)
                ticks += 1

        embedded, _ = await asyncio.gather(
            asyncio.gather(
                model.aget_query_embedding("q"),
                model.aget_text_embedding("t"),
                model._aget_text_embeddings(["a"]),
            ),
            tick(),
        )
        vectors = [embedded[0], embedded[1], *embedded[2]]
        return vectors, ticks, threading.get_ident()

    vectors, ticks, loop_thread = asyncio.run(embed_and_tick())
    assert ticks == 10
    assert all(vector[0] != float(loop_thread) for vector in vectors)
