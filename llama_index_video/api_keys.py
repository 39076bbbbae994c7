"""API keys: read once (stripped), then masked in every text the package lets out.

A key pasted from a file often ends in a newline or a space. It is stripped when
read, so the SDKs send a clean header, and both forms, as given and stripped, are
remembered so that :func:`scrub` masks them wherever they turn up: error messages,
errors stored in the manifest, log lines, the command line's output and its
``--debug`` tracebacks. An API may echo a request's headers back in its error body,
so masking by the key itself, not by where it was expected, is what holds.

The register is process-wide on purpose: the code that stores or prints an error
(the manifest, the command line) never holds the key that caused it. Strings
shorter than :data:`SHORTEST_KEY` are not registered: no vendor issues such keys,
and masking one would garble every message that happens to contain it.
"""

from __future__ import annotations

import logging
import os
import threading
import traceback
from collections.abc import Sequence
from typing import Final

MASK: Final = "***"
SHORTEST_KEY: Final = 8

_lock = threading.Lock()
_known: tuple[str, ...] = ()  # longest first, so a key masks before any part of it


def read_api_key(given: str | None, variables: Sequence[str]) -> str | None:
    """The API key: ``given``, else the first of ``variables`` set, stripped.

    Blank values count as unset. The key found is registered for :func:`scrub`.

    Returns:
        The stripped key, or ``None`` when there is none.
    """
    candidates = [given, *(os.environ.get(name) for name in variables)]
    raw = next((value for value in candidates if value and value.strip()), None)
    if raw is None:
        return None
    register(raw)
    return raw.strip()


def register(secret: str) -> None:
    """Mask ``secret``, as given and stripped, in everything :func:`scrub` sees from now on."""
    global _known
    forms = {form for form in (secret, secret.strip()) if len(form.strip()) >= SHORTEST_KEY}
    with _lock:
        _known = tuple(sorted(set(_known) | forms, key=len, reverse=True))


def scrub(text: str) -> str:
    """``text`` with every registered key replaced by ``***``."""
    for secret in _known:
        text = text.replace(secret, MASK)
    return text


def scrubbed_traceback(exc: BaseException) -> str:
    """The traceback Python would print for ``exc`` (with its causes), keys masked."""
    return scrub("".join(traceback.format_exception(exc)))


class ScrubbingFormatter(logging.Formatter):
    """A log formatter that masks the registered keys in the whole record, traceback included."""

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record, keys masked."""
        return scrub(super().format(record))


__all__ = [
    "MASK",
    "ScrubbingFormatter",
    "read_api_key",
    "register",
    "scrub",
    "scrubbed_traceback",
]
