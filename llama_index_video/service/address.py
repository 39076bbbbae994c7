"""Where a running ``serve`` of an index is, so other doors can link to its page.

While ``serve`` runs it keeps :data:`SERVICE_FILE` in the index folder: its page's
address and its process id, removed when it stops (:func:`announced`). The MCP server
reads it (:func:`running_page`) to give each moment the page's deep link,
``http://127.0.0.1:8000/#source=talk.mp4&t=94&end=101`` (:func:`page_link`, the form the
page writes into its address bar), instead of a file path. A file left by a service
that was killed is ignored: its process is gone. A folder the service may not write
(a read-only share) gets no file, and other doors keep giving file links.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

logger = logging.getLogger(__name__)

SERVICE_FILE = "service.json"
"""In the index folder while ``serve`` runs: ``{"url": ..., "pid": ...}``."""
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


@contextmanager
def announced(folder: Path, url: str) -> Iterator[None]:
    """Keep :data:`SERVICE_FILE` in ``folder`` saying ``url`` while the block runs."""
    target = folder / SERVICE_FILE
    try:
        target.write_text(json.dumps({"url": url, "pid": os.getpid()}))
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
    try:
        said = json.loads((folder / SERVICE_FILE).read_text())
        url, pid = str(said["url"]), int(said["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return url if url.startswith(("http://", "https://")) and _alive(pid) else None


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
