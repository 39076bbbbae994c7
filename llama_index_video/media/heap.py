"""Handing memory freed by one file's reading back to the operating system.

Reading a video frees most of what it allocated (audio samples, decoder and OCR
buffers, CTranslate2's and ONNX Runtime's scratch tensors), but glibc's allocator keeps
freed chunks inside its heaps, one heap per thread that allocated, and returns them to
the system only from the very top of a heap. So the resident size after a file stays
near its peak, and the next file's peak (speech recognition beside frame OCR, in two
threads with two heaps) comes on top of it. ``malloc_trim(0)`` gives every free page
of every heap back; on the example media it takes an ingest from about 1,000 MB peak
to about 880 MB, for a few milliseconds per file (docs/benchmarks.md, issue 13).

Elsewhere than on glibc (macOS, musl) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from collections.abc import Callable

logger = logging.getLogger(__name__)


def release_free_memory() -> bool:
    """Return the allocator's free pages to the system; whether anything could be asked.

    Cheap (it walks the allocator's free lists) and safe at any time from any thread.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library the process already uses
    except (OSError, AttributeError):  # musl and other C libraries
        logger.debug("no malloc_trim in this C library; freed memory stays with the process")
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim
