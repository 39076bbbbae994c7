"""Freed memory goes back to the system between files."""

from __future__ import annotations

import ctypes
import sys

import pytest

from llama_index_video.media import heap

BLOCK = 100_000  # under glibc's mmap threshold: served from the heap, kept there when freed
BLOCKS = 1_500  # 150 MB


def _resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


@pytest.mark.skipif(heap._malloc_trim() is None, reason="no malloc_trim in this C library")
def test_freed_heap_memory_is_returned_to_the_system():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    kept = libc.malloc(BLOCK)  # above the freed ones: the heap cannot simply shrink at its top
    try:
        for block in blocks:
            ctypes.memset(block, 1, BLOCK)  # touched, so resident
        for block in blocks:
            libc.free(block)
        held = _resident_mb()
        assert heap.release_free_memory()
        assert _resident_mb() < held - 100
    finally:
        libc.free(kept)


def test_without_malloc_trim_nothing_is_done(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    heap._malloc_trim.cache_clear()
    try:
        assert heap.release_free_memory() is False
    finally:
        heap._malloc_trim.cache_clear()
