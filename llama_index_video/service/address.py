"""Where a running ``serve`` of an index is, so other doors can link to its page.

While ``serve`` runs it keeps :data:`SERVICE_FILE` in the index folder: its page's
address, its process id and the settings it opened the index with, removed when it
stops (:func:`announced`). The MCP server reads it (:func:`running_page`) to give each
moment the page's deep link, ``http://127.0.0.1:8000/#source=talk.mp4&t=94&end=101``
(:func:`page_link`, the form the page writes into its address bar), instead of a file
path; the command line's ``search`` asks the service instead of loading the index
itself when its settings are the same (:func:`running_service`,
:mod:`llama_index_video.cli.warm_search`). A file left by a service that was killed is
ignored: its process is gone. A folder the service may not write (a read-only share)
gets no file, and other doors keep giving file links and searching cold.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

logger = logging.getLogger(__name__)

SERVICE_FILE = "service.json"
"""In the index folder while ``serve`` runs: ``{"url": ..., "pid": ..., "settings": ...}``."""
ANY_ADDRESS = ("0.0.0.0", "::", "")
"""Binding to every address: the page is reached on loopback from this machine."""


def page_address(host: str, port: int) -> str:
    """The page's URL for a service bound to ``host``:``port``."""
    host = "127.0.0.1" if host in ANY_ADDRESS else host
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def page_link(page: str, source: str, start: float, end: float | None = None) -> str:
    """The page's deep link that plays ``source`` (as the library names it) from
    ``start`` (to ``end``, its download's end)."""
    moment = {"source": source, "t": _shown(start)}
    if end is not None and end > start:
        moment["end"] = _shown(end)
    return f"{page.rstrip('/')}/#{urlencode(moment)}"


@dataclass(frozen=True)
class RunningService:
    """A ``serve`` running over an index folder, as its :data:`SERVICE_FILE` says."""

    url: str
    """Its page's address (``http://127.0.0.1:8000``)."""
    settings: Mapping[str, Any] | None = None
    """The options it opened the index with (:func:`index_settings`); None: unknown."""


def index_settings(
    *, relevance: object, lexical: bool, chroma_url: str | None, collection: str | None
) -> dict[str, Any] | None:
    """The ``VideoIndex`` options a service opened its folder with, as
    :data:`SERVICE_FILE` keeps them and ``search`` compares its own with them; None when
    they cannot be written there (a gate object given in Python)."""
    if relevance is not None and not isinstance(relevance, str):
        return None
    return {
        "relevance": relevance,
        "lexical": lexical,
        "chroma_url": chroma_url,
        "collection": collection,
    }


@contextmanager
def announced(
    folder: Path, url: str, *, settings: Mapping[str, Any] | None = None
) -> Iterator[None]:
    """Keep :data:`SERVICE_FILE` in ``folder`` saying ``url`` (and the index's
    ``settings``, :func:`index_settings`) while the block runs."""
    target = folder / SERVICE_FILE
    said = {"url": url, "pid": os.getpid(), "settings": settings}
    try:
        target.write_text(json.dumps(said))
    except OSError as exc:
        logger.debug("%s: not announced: %s", target, exc)
        yield
        return
    try:
        yield
    finally:
        if running_page(folder) == url:  # not another service's, started since
            target.unlink(missing_ok=True)


def running_page(folder: Path) -> str | None:
    """The page of the ``serve`` running over the index in ``folder``, or None."""
    service = running_service(folder)
    return None if service is None else service.url


def running_service(folder: Path) -> RunningService | None:
    """The ``serve`` running over the index in ``folder``, or None."""
    try:
        said = json.loads((folder / SERVICE_FILE).read_text())
        url, pid, settings = str(said["url"]), int(said["pid"]), said.get("settings")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not url.startswith(("http://", "https://")) or not _alive(pid):
        return None
    return RunningService(url, settings if isinstance(settings, dict) else None)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _shown(seconds: float) -> str:
    """At most two decimals, no trailing zeros (as the page writes times)."""
    return f"{round(seconds, 2):g}"
