"""One keyed cache of loaded models: loaded once per key, however many threads ask."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from llama_index_video.model_cache import ModelCache


def test_threads_asking_at_once_share_one_load_per_key():
    cache: ModelCache[str, object] = ModelCache()
    loads: list[str] = []
    lock = threading.Lock()

    def make(key: str) -> object:
        with lock:
            loads.append(key)
        time.sleep(0.02)  # a slow load: the others must wait for it, not start their own
        return object()

    with ThreadPoolExecutor(8) as pool:
        models = list(pool.map(lambda k: cache.load(k, lambda: make(k)), ["a", "b"] * 8))
    assert sorted(loads) == ["a", "b"]
    assert len({id(m) for m in models}) == 2


def test_a_failed_load_caches_nothing_and_forget_drops_all():
    cache: ModelCache[str, int] = ModelCache()

    def broken() -> int:
        raise RuntimeError("no weights")

    with pytest.raises(RuntimeError):
        cache.load("a", broken)
    assert "a" not in cache
    assert cache.load("a", lambda: 1) == 1 and cache.load("a", lambda: 2) == 1
    cache.forget()
    assert cache.load("a", lambda: 3) == 3
