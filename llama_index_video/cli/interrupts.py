"""Ctrl-C during ``ingest``, kept even where a library loses it.

Python turns SIGINT into a ``KeyboardInterrupt`` raised in the main thread wherever it
is at that moment; raised where a library catches broad errors, the interrupt is gone,
and the ingest went on to its end (2 of 10 SIGINTs sent just after a file's line, while
the next file's speech models loaded, on a 2-core machine). :class:`Interrupts` also
notes the SIGINT, and :meth:`Interrupts.check`, called at each progress tick and after
each file, raises it again.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any


class Interrupts:
    """Within ``with``, SIGINT raises ``KeyboardInterrupt`` and is remembered (main thread only)."""

    def __init__(self) -> None:
        self._seen = threading.Event()
        self._previous: Any = None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, number: int, frame: FrameType | None) -> None:
        self._seen.set()
        raise KeyboardInterrupt

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` again if SIGINT came (in the main thread only:
        elsewhere it would only end that thread's work)."""
        if self._seen.is_set() and threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
