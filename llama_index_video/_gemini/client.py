"""The google-genai client: the key's environment variables, the lazy import, construction.

google-genai is imported lazily: this module loads without the ``gemini`` extra.
:class:`RetrySettings` are the timeout and retry fields both Gemini classes take, and
the :class:`~.transport.RetryPolicy` they make.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from llama_index.core.bridge.pydantic import BaseModel, Field, model_validator

from llama_index_video._gemini.transport import RetryPolicy
from llama_index_video.errors import MissingDependencyError

if TYPE_CHECKING:
    from google import genai
    from typing_extensions import Self

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


class RetrySettings(BaseModel):
    """Timeout and backoff of every request, as fields of a Gemini class.

    Each class declares ``max_retries`` itself: an ingest retries more than a question
    someone waits for.
    """

    max_retries: int
    timeout: float = Field(
        default=120.0, gt=0, description="Seconds before one HTTP request (attempt) times out."
    )
    retry_initial_delay: float = Field(
        default=1.0, gt=0, description="First backoff delay in seconds (doubles, plus jitter)."
    )
    retry_max_delay: float = Field(default=30.0, gt=0, description="Longest backoff delay (s).")

    @model_validator(mode="after")
    def _check_delays(self) -> Self:
        if self.retry_max_delay < self.retry_initial_delay:
            raise ValueError("retry_max_delay must be >= retry_initial_delay")
        return self

    def retry_policy(self) -> RetryPolicy:
        """The bounds of every retry and wait these settings give."""
        return RetryPolicy(
            attempts=self.max_retries + 1,
            initial_delay=self.retry_initial_delay,
            max_delay=self.retry_max_delay,
            timeout=self.timeout,
        )
