"""Loaded models, kept once per process and shared: one keyed cache for every kind.

Speech recognisers, speaker encoders and diarization pipelines take seconds and
hundreds of megabytes to load, and every reader of a process may ask for the same
one at once. Each kind keeps a :class:`ModelCache` keyed by what makes two models
the same (weights, device, compute type, threads): the first thread to ask loads it
while the others wait, and a load that fails caches nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ModelCache(dict[K, V]):
    """Models by key, loaded at most once by :meth:`load`.

    A dict, so a test can put a model in (``monkeypatch.setitem``). ``lock`` is
    reentrant: a caller may hold it across work that must not race with a load (such as
    resolving which weights a name means) and call :meth:`load` inside.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.RLock()

    def load(self, key: K, make: Callable[[], V]) -> V:
        """The model for ``key``, made by ``make()`` if this process has none yet."""
        with self.lock:
            if key not in self:
                self[key] = make()
            return self[key]

    def forget(self) -> None:
        """Drop every model (they are freed once nothing else holds them)."""
        with self.lock:
            self.clear()
