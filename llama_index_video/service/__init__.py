"""The HTTP service and its web page (``pip install 'llama-index-video[serve]'``).

:func:`serve` runs it over an index folder (``llama-index-video serve``);
:func:`create_app` builds the ASGI app over an open ``VideoIndex``, to run with any
ASGI server or mount in your own. ``docs/service.md`` describes the routes, the
security model and the measured latency.
"""

from __future__ import annotations

from llama_index_video.service.app import ERROR_STATUS, create_app
from llama_index_video.service.guard import InsecureBindError
from llama_index_video.service.live import Answerer, LiveIndex, ask_with
from llama_index_video.service.server import app_for_folder, serve

__all__ = [
    "ERROR_STATUS",
    "Answerer",
    "InsecureBindError",
    "LiveIndex",
    "app_for_folder",
    "ask_with",
    "create_app",
    "serve",
]
