"""The google-genai client: the key's environment variables, the lazy import, construction.

google-genai is imported lazily: this module loads without the ``gemini`` extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from llama_index_video._gemini.transport import RetryPolicy
from llama_index_video.errors import MissingDependencyError

if TYPE_CHECKING:
    from google import genai

API_KEY_ENV: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Environment variables holding the API key, in order of preference."""


def import_genai(purpose: str) -> Any:
    """The ``google.genai`` module, or an error naming the extra that installs it.

    Raises:
        MissingDependencyError: google-genai is not installed.
    """
    try:
        return importlib.import_module("google.genai")
    except ImportError as exc:
        raise MissingDependencyError("google-genai", "gemini", purpose) from exc


def make_client(
    *, api_key: str, policy: RetryPolicy, base_url: str | None, purpose: str
) -> genai.Client:
    """A client sending every request with ``policy``'s timeout and retries.

    One client serves sync and async calls (``client.aio``): the SDK keeps an HTTP
    session per event loop.
    """
    client: genai.Client = import_genai(purpose).Client(
        api_key=api_key, http_options=policy.http_options(base_url)
    )
    return client
