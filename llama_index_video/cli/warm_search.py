"""``search`` through a ``serve`` already running over the same index folder.

A cold ``search`` spends nearly all its time loading, not searching: LlamaIndex (about
1.6 CPU s here), Chroma (0.7 s), the index and the embedding model (0.35 s), against
20-50 ms for the search itself (docs/benchmarks.md). While ``serve`` runs over a
folder it says where, and with which settings it opened the index, in the folder's
``service.json`` (:mod:`llama_index_video.service.address`). ``search`` then asks it
over HTTP with the standard library's client, loading nothing else, and prints the
hits it returns: ``VideoIndex.search``'s over the same folder and settings, the
service's media links left out (``SearchHit.from_dict``).

Only a service that can give the same hits is asked: its settings (``--relevance``,
``--lexical``, ``--chroma-url``, ``--collection``) equal the command's, and the
command asks for nothing its ``/api/search`` does not take (``--speaker``,
``--by-chapter``, a query with surrounding blanks, which the service strips), nor
``--language``: a service started before ``/api/search`` took ``language`` would ignore
it and answer every language's hits. A token
comes from ``$LLAMA_INDEX_VIDEO_TOKEN``, as ``serve`` reads it. Otherwise, or when the
service answers anything but hits within :data:`TIMEOUT_SECONDS` (it stopped, it wants
another token, it is overloaded), the command searches the folder itself, as it would
without a service: one request at most, never a retry.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import ProxyHandler, Request, build_opener

from llama_index_video.results import SearchHit
from llama_index_video.service.address import index_settings, running_service
from llama_index_video.service.guard import TOKEN_ENV

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 5.0
"""How long the service may take to answer before the command searches the folder."""


def served_search(
    folder: Path,
    query: str,
    *,
    settings: Mapping[str, Any],
    top_k: int,
    modalities: Sequence[str] | None = None,
) -> list[SearchHit] | None:
    """The hits of the ``serve`` running over ``folder`` with ``settings`` (the
    ``VideoIndex`` options the command would open the folder with: ``relevance``,
    ``lexical``, ``chroma_url``, ``collection``); None when there is none, or it did not
    answer with hits (the caller then searches itself)."""
    service = running_service(folder)
    wanted = index_settings(**settings)
    if service is None or wanted is None or service.settings != wanted:
        return None
    if query != query.strip():
        return None
    params: dict[str, str | int] = {"q": query, "top_k": top_k}
    if modalities:
        params["modality"] = ",".join(modalities)
    token = os.environ.get(TOKEN_ENV)
    request = Request(
        f"{service.url.rstrip('/')}/api/search?{urlencode(params)}",
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    opener = build_opener(ProxyHandler({}))  # the service is reached directly, never proxied
    try:
        with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            found = json.loads(response.read())
        return [SearchHit.from_dict(item) for item in found]
    except (OSError, ValueError, TypeError, AttributeError) as exc:  # HTTP errors are OSErrors
        logger.debug("%s did not answer (%s); searching %s itself", service.url, exc, folder)
        return None
