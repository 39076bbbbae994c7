"""The HTTP service and its web page (``pip install 'llama-index-video[serve]'``).

:func:`serve` runs it over an index folder (``llama-index-video serve``);
:func:`create_app` builds the ASGI app over an open ``VideoIndex``, to run with any
ASGI server or mount in your own. ``docs/guides/service.md`` describes the routes, the
security model and the measured latency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._faces import lazy_exports

if TYPE_CHECKING:
    from llama_index_video.service.app import ERROR_STATUS, create_app
    from llama_index_video.service.guard import InsecureBindError
    from llama_index_video.service.live import Answerer, LiveIndex, ask_with
    from llama_index_video.service.server import app_for_folder, serve

_EXPORTS: dict[str, str] = {
    "ERROR_STATUS": "llama_index_video.service.app",
    "create_app": "llama_index_video.service.app",
    "InsecureBindError": "llama_index_video.service.guard",
    "Answerer": "llama_index_video.service.live",
    "LiveIndex": "llama_index_video.service.live",
    "ask_with": "llama_index_video.service.live",
    "app_for_folder": "llama_index_video.service.server",
    "serve": "llama_index_video.service.server",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
