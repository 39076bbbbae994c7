"""Fixtures of the reader's tests: how many times each file is probed."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

import llama_index_video.media.probe as media_probe
from llama_index_video.index import VideoIndex  # noqa: F401  (its modules are patched too)


@pytest.fixture
def probes(monkeypatch) -> Counter[str]:
    """How many times each file (by name) is probed, by any module of the package."""
    counts: Counter[str] = Counter()
    real = media_probe.probe

    def counting(path: str | Path) -> media_probe.MediaInfo:
        counts[Path(path).name] += 1
        return real(path)

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith("llama_index_video") and getattr(module, "probe", None) is real:
            monkeypatch.setattr(module, "probe", counting)
    return counts
