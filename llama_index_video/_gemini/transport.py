"""How requests reach the Gemini API: retries, Files API uploads, batch jobs.

The protocol (which SDK calls to make, when to wait, when to retry, what to clean
up afterwards) is written once, as generators that *yield operations* (a
:class:`Call` of an SDK method, an :class:`Upload`, a :class:`Sleep`) and receive
each operation's result, or its exception, back. :func:`run` performs the
operations with the synchronous ``genai.Client``, :func:`arun` with ``client.aio``,
so the sync and async paths of the embedding and the LLM cannot drift apart.

Retries happen in two bounded layers sharing one :class:`RetryPolicy`:

- the SDK's ``HttpRetryOptions`` (see :meth:`RetryPolicy.http_options`) retry every
  JSON request answered 408, 429 or 5xx, and, on its httpx transport, requests
  that time out or cannot connect; exponential backoff with jitter;
- :func:`retrying` here retries what the SDK does not: a whole resumable upload
  (the SDK re-sends a chunk only when the answer carries no upload status, and
  never restarts the upload) and transport failures its aiohttp transport (the
  async client) passes through, such as read timeouts.

Why a protocol runner rather than tenacity alone: each protocol here spans several
calls (upload, poll, use, delete; create a batch job, poll, cancel) and is written once
for the sync and the async client; tenacity retries single calls, and every protocol
would be written twice.

The Files API processes uploads before they can be used, so an upload is polled
until ``ACTIVE`` with a deadline; ``FAILED`` and the deadline are errors. Batch jobs
are polled the same way.

google-genai is imported lazily: this module loads without the ``gemini`` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import logging
import random
import time
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Generic, TypeVar

from llama_index_video.api_keys import scrub
from llama_index_video.errors import RemoteAPIError

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

logger = logging.getLogger(__name__)

T = TypeVar("T")
SERVICE: Final = "Gemini API"
RETRYABLE_STATUS: Final = (408, 429, 500, 502, 503, 504)


@dataclass(frozen=True)
class Call:
    """Call an SDK method, named by its dotted path on the client (``"models.embed_content"``).

    ``experimental``: the SDK warns on every call that the method is experimental;
    the caller chose it, so that warning is silenced for this call alone.
    """

    method: str
    kwargs: Mapping[str, Any]
    experimental: bool = False


@dataclass(frozen=True)
class Upload:
    """Upload a stream through the Files API (from its start); the result is a ``types.File``."""

    stream: BinaryIO
    mimetype: str
    display_name: str


@dataclass(frozen=True)
class Sleep:
    """Wait before the next operation."""

    seconds: float


Op = Call | Upload | Sleep
Steps = Generator[Op, Any, T]


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds for every retry and wait: attempts include the first try; times in seconds."""

    attempts: int
    initial_delay: float
    max_delay: float
    timeout: float

    def delay(self, retry: int) -> float:
        """Backoff before retry number ``retry`` (1-based): doubling, capped, plus jitter."""
        backoff: float = min(self.max_delay, self.initial_delay * 2 ** (retry - 1))
        return backoff + random.uniform(0, self.initial_delay)

    def http_options(self, base_url: str | None) -> types.HttpOptions:
        """The SDK options: per-request timeout and the same retry bounds for JSON calls."""
        from google.genai import types

        return types.HttpOptions(
            base_url=base_url,
            timeout=round(self.timeout * 1000),
            retry_options=types.HttpRetryOptions(
                attempts=self.attempts,
                initial_delay=self.initial_delay,
                max_delay=self.max_delay,
                exp_base=2.0,
                jitter=self.initial_delay,
                http_status_codes=list(RETRYABLE_STATUS),
            ),
        )


def run(steps: Steps[T], client: genai.Client) -> T:
    """Perform a protocol's operations with the synchronous client."""
    stepper = _Stepper(steps)
    try:
        while (op := stepper.next_op()) is not None:
            try:
                with _quiet(op):
                    stepper.resolve(_bind(op, client, time.sleep)())
            except Exception as exc:  # handed to the protocol, which decides
                stepper.fail(exc)
    finally:
        steps.close()
    return stepper.result


async def arun(steps: Steps[T], client: genai.Client) -> T:
    """Perform a protocol's operations with the asynchronous client (``client.aio``)."""
    stepper = _Stepper(steps)
    try:
        while (op := stepper.next_op()) is not None:
            try:
                with _quiet(op):
                    stepper.resolve(await _bind(op, client.aio, asyncio.sleep)())
            except Exception as exc:  # handed to the protocol, which decides
                stepper.fail(exc)
    finally:
        steps.close()  # cancelled: the protocol skips its remaining steps
    return stepper.result


class _Stepper(Generic[T]):
    """Advances a protocol generator, feeding it each operation's result or exception."""

    def __init__(self, steps: Steps[T]) -> None:
        self._steps = steps
        self._reply: Any = None
        self._error: Exception | None = None
        self.result: T

    def next_op(self) -> Op | None:
        try:
            if self._error is not None:
                return self._steps.throw(self._error)
            return self._steps.send(self._reply)
        except StopIteration as stop:
            self.result = stop.value
            return None
        finally:
            self._reply, self._error = None, None

    def resolve(self, reply: Any) -> None:
        self._reply = reply

    def fail(self, error: Exception) -> None:
        self._error = error


@contextlib.contextmanager
def _quiet(op: Op) -> Iterator[None]:
    """Silence the SDK's experimental-method warning during an ``experimental`` call."""
    if not (isinstance(op, Call) and op.experimental):
        yield
        return
    from google.genai import errors

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=errors.ExperimentalWarning)
        yield


def _bind(op: Op, api: Any, sleep: Callable[[float], Any]) -> Callable[[], Any]:
    if isinstance(op, Sleep):
        return functools.partial(sleep, op.seconds)
    if isinstance(op, Upload):
        from google.genai import types

        op.stream.seek(0)  # a failed attempt has consumed part of it
        config = types.UploadFileConfig(mime_type=op.mimetype, display_name=op.display_name)
        return functools.partial(api.files.upload, file=op.stream, config=config)
    target = api
    for name in op.method.split("."):
        target = getattr(target, name)
    return functools.partial(target, **op.kwargs)


def retrying(
    policy: RetryPolicy, op: Op, *, what: str, retry_on: Callable[[BaseException], bool]
) -> Steps[Any]:
    """Perform ``op``, retrying with backoff while ``retry_on`` accepts the failure."""
    attempt = 1
    while True:
        try:
            return (yield op)
        except Exception as exc:
            if attempt >= policy.attempts or not retry_on(exc):
                raise
            delay = policy.delay(attempt)
            logger.info(
                "%s failed (%s); retry %d of %d in %.2f s",
                what,
                type(exc).__name__,
                attempt,
                policy.attempts - 1,
                delay,
            )
            yield Sleep(delay)
            attempt += 1


def call(
    policy: RetryPolicy, method: str, *, experimental: bool = False, **kwargs: Any
) -> Steps[Any]:
    """A JSON API call; the SDK retries HTTP errors, this adds what it leaves out."""
    op = Call(method, kwargs, experimental)
    return retrying(policy, op, what=method, retry_on=_not_retried_by_sdk)


def upload(
    policy: RetryPolicy,
    source: Path | bytes,
    *,
    mimetype: str,
    display_name: str,
    poll_interval: float,
    ready_timeout: float,
) -> Steps[types.File]:
    """Upload through the Files API and wait until the file is ``ACTIVE``.

    The SDK is handed an open stream, never a path: for a path it would send the
    file name in a header, which fails for names that are not ASCII. A file that
    never becomes usable is deleted before the error is raised.

    Raises:
        RemoteAPIError: processing ``FAILED`` or did not finish within ``ready_timeout``.
    """

    opened = source.open("rb") if isinstance(source, Path) else io.BytesIO(source)
    with opened as stream:
        file: types.File = yield from retrying(
            policy,
            Upload(stream, mimetype, display_name),
            what=f"upload of {display_name}",
            retry_on=is_transient,
        )
    try:
        return (yield from _until_active(policy, file, display_name, poll_interval, ready_timeout))
    except Exception:
        yield from delete(policy, file.name)
        raise


def _until_active(
    policy: RetryPolicy,
    file: types.File,
    display_name: str,
    poll_interval: float,
    ready_timeout: float,
) -> Steps[types.File]:
    from google.genai import types

    deadline = time.monotonic() + ready_timeout
    while file.state == types.FileState.PROCESSING:
        if time.monotonic() >= deadline:
            raise RemoteAPIError(
                SERVICE,
                f"{display_name} was still PROCESSING in the Files API after "
                f"{ready_timeout:.0f} s; retry later or raise file_ready_timeout",
            )
        yield Sleep(poll_interval)
        file = yield from call(policy, "files.get", name=file.name)
    if file.state == types.FileState.FAILED:
        reason = file.error.message if file.error and file.error.message else "no reason given"
        raise RemoteAPIError(SERVICE, f"the Files API could not process {display_name} ({reason})")
    logger.debug("uploaded %s as %s", display_name, file.name)
    return file


def delete(policy: RetryPolicy, name: str | None) -> Steps[None]:
    """Delete an uploaded file; a failure is logged, never raised (uploads expire in 48 h)."""
    if not name:
        return
    try:
        yield from call(policy, "files.delete", name=name)
    except Exception as exc:
        if not is_failure(exc):
            raise
        logger.warning("could not delete %s from the Files API (%s)", name, describe(exc))


def batch_job(
    policy: RetryPolicy,
    *,
    model: str,
    src: types.EmbeddingsBatchJobSource,
    display_name: str,
    poll_interval: float,
    timeout: float,
) -> Steps[types.BatchJob]:
    """Create an embeddings batch job and poll it until it ends.

    Raises:
        RemoteAPIError: the job did not end within ``timeout`` (it is cancelled).
    """
    from google.genai import types

    job: types.BatchJob = yield from call(
        policy,
        "batches.create_embeddings",
        experimental=True,  # the caller opted into the Batch API
        model=model,
        src=src,
        config=types.CreateEmbeddingsBatchJobConfig(display_name=display_name),
    )
    logger.info("batch job %s created (%s)", job.name, display_name)
    deadline = time.monotonic() + timeout
    while job.state not in _JOB_DONE:
        if time.monotonic() >= deadline:
            try:
                yield from call(policy, "batches.cancel", name=job.name)
            except Exception as exc:
                if not is_failure(exc):
                    raise
                logger.warning("could not cancel batch job %s (%s)", job.name, describe(exc))
            raise RemoteAPIError(
                SERVICE,
                f"batch job {job.name} had not finished after {timeout:.0f} s and was "
                "cancelled; raise batch_timeout or embed without the Batch API",
            )
        yield Sleep(poll_interval)
        job = yield from call(policy, "batches.get", name=job.name)
    return job


_JOB_DONE: Final = frozenset(
    {
        "JOB_STATE_SUCCEEDED",
        "JOB_STATE_PARTIALLY_SUCCEEDED",
        "JOB_STATE_FAILED",
        "JOB_STATE_CANCELLED",
        "JOB_STATE_EXPIRED",
    }
)


def is_failure(exc: BaseException) -> bool:
    """An error answered by the API or the network (as opposed to a bug in the caller)."""
    from google.genai import errors

    return isinstance(exc, errors.APIError | RemoteAPIError) or _is_transport(exc)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: 408/429/5xx answers, timeouts and broken connections."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        return exc.code in RETRYABLE_STATUS
    return _is_transport(exc)


def _not_retried_by_sdk(exc: BaseException) -> bool:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        return False  # HttpRetryOptions already retried the retryable codes
    return _is_transport(exc) and not isinstance(exc, sdk_retried_transport())


@functools.cache
def _transport_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [TimeoutError, asyncio.TimeoutError, ConnectionError]
    for module, name in (("httpx", "TransportError"), ("httpx2", "TransportError")):
        found.extend(_optional_class(module, name))
    found.extend(_optional_class("aiohttp", "ClientError"))
    return tuple(found)


SDK_RETRIED_TRANSPORT: Final = (
    ("httpx", "TimeoutException"),
    ("httpx", "ConnectError"),
    ("httpx2", "TimeoutException"),
    ("httpx2", "ConnectError"),
    ("aiohttp", "ClientConnectorError"),
    ("aiohttp", "ClientOSError"),
    ("aiohttp", "ServerDisconnectedError"),
)
"""The transport errors ``HttpRetryOptions`` retry, as (module, class).

google-genai keeps this list private; a test compares it with the SDK's so that a
change there fails loudly instead of doubling (or dropping) retries here.
"""


@functools.cache
def sdk_retried_transport() -> tuple[type[BaseException], ...]:
    """The classes of :data:`SDK_RETRIED_TRANSPORT` whose module is installed."""
    return tuple(c for module, name in SDK_RETRIED_TRANSPORT for c in _optional_class(module, name))


def _is_transport(exc: BaseException) -> bool:
    return isinstance(exc, _transport_errors())


def _optional_class(module: str, name: str) -> list[type[BaseException]]:
    try:
        found = getattr(__import__(module), name)
    except (ImportError, AttributeError):
        return []
    return [found]


def blames_the_key(exc: BaseException) -> bool:
    """The API's answer says the API key is at fault (e.g. 400 ``API_KEY_INVALID``)."""
    details, message = str(getattr(exc, "details", "")), str(getattr(exc, "message", ""))
    return "API_KEY" in details or "API key" in message


def describe(exc: BaseException) -> str:
    """A one-line account of an API or network failure, API keys masked."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        text = f"HTTP {exc.code} {exc.status or ''}: {exc.message or 'no message'}".strip()
    elif isinstance(exc, TimeoutError | asyncio.TimeoutError) or "Timeout" in type(exc).__name__:
        text = f"no answer within the request timeout ({type(exc).__name__})"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return scrub(text)


def remote_error(exc: BaseException, *, what: str) -> RemoteAPIError:
    """Translate an SDK or network failure into the package's error, with advice."""
    from google.genai import errors

    if isinstance(exc, RemoteAPIError):
        return exc
    status = exc.code if isinstance(exc, errors.APIError) else None
    advice = _ADVICE.get(status or 0, "the next ingest retries items that failed")
    reason = f"{what} failed: {describe(exc)}; {advice}"
    return RemoteAPIError(SERVICE, reason, status=status)


_ADVICE: Final = {
    400: "check the input and the API key (GEMINI_API_KEY)",
    401: "check the API key (GEMINI_API_KEY)",
    403: "check the API key (GEMINI_API_KEY) and that the Gemini API is enabled for it",
    404: "check the model name",
    429: "rate limit or quota exhausted; retry later or lower max_concurrency",
}
