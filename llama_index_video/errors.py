"""The package's exceptions, one tree rooted at :class:`VideoIndexError`.

::

    VideoIndexError
    ├── MissingDependencyError     an optional extra is not installed
    ├── MediaError                 a file cannot be used as media
    │   ├── UnsupportedMediaError  no usable audio or video stream, unknown type
    │   └── MediaDecodeError       the decoder failed (truncated, corrupt)
    ├── TranscriptionError         the speech model failed or cannot be loaded
    │   └── UnsupportedLanguageError  speech in a language the allowed models cannot write
    ├── DiarizationError           the speaker model failed or cannot be loaded
    ├── DownloadError              a link cannot be fetched (HTTP error, not media, too big)
    ├── EmbeddingError             an embedding backend failed or disagrees with the index
    ├── RemoteAPIError             a remote API (Gemini, Anthropic) still failed after retries
    ├── IndexCompatibilityError    an index made by another version or embedding model
    ├── VectorStoreError           the vector store (e.g. a Chroma server) cannot be used
    ├── IndexStorageError          the index folder cannot be used as it is on disk
    │   ├── IndexBusyError         another writer is at work in the index
    │   ├── IndexCorruptError      a file of the index is damaged, or disagrees with another
    │   ├── IndexReadOnlyError     writing to an index the process may only read
    │   └── DiskFullError          no space left (or quota reached) while writing
    ├── AnswerError                generation failed
    ├── MomentRequestError         a moment asked of the index that it cannot give: an
    │                              unknown source, a time that is not one, times outside
    │                              the recording, a span over the limit, an argument of
    │                              the wrong type (also a ValueError)
    └── InsecureBindError          serving beyond loopback without a token
                                   (``llama_index_video.service.guard``; also a ValueError)

Every message names the file (or model) and what to do next; errors raised by
third-party libraries are chained with ``from exc`` so ``--debug`` can show them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def printable_path(path: str | Path) -> str:
    """``path`` as text that can always be printed and stored.

    A file name that is not valid UTF-8 reaches Python with its undecodable bytes as
    lone surrogates, which printing, logging and SQLite refuse; they are shown as
    ``\\xNN`` escapes instead. Valid names come back unchanged.
    """
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


class VideoIndexError(Exception):
    """Root of every error this package raises on purpose."""


class MissingDependencyError(VideoIndexError, ImportError):
    """An optional dependency is missing; the message names the extra to install.

    ``install`` replaces the pip command for what pip cannot install (a system program).
    """

    def __init__(
        self, package: str, extra: str, purpose: str, *, install: str | None = None
    ) -> None:
        self.package = package
        self.extra = extra
        hint = install or f"pip install 'llama-index-video[{extra}]'"
        super().__init__(f"{purpose} needs the '{package}' package: {hint}")


class MediaError(VideoIndexError):
    """A file cannot be used as media. ``path`` is the offending file."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{printable_path(self.path)}: {reason}")


class UnsupportedMediaError(MediaError):
    """The file has no usable audio or video stream, or is not media at all."""


class MediaDecodeError(MediaError):
    """Decoding failed part-way (truncated or corrupt file)."""


class TranscriptionError(VideoIndexError):
    """The speech model could not be loaded or failed on a file."""


class UnsupportedLanguageError(TranscriptionError):
    """A file's speech is in a language that no allowed speech model can write.

    ``language`` is the Whisper code heard (``"de"``); the message names the file, the
    language and how to get a model for it.
    """

    def __init__(self, message: str, *, language: str) -> None:
        super().__init__(message)
        self.language = language


class DiarizationError(VideoIndexError):
    """The speaker (diarization) model could not be loaded or failed on a file."""


class DownloadError(VideoIndexError):
    """A link could not be fetched. ``url`` is shown without credentials or query."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class EmbeddingError(VideoIndexError):
    """An embedding backend failed."""


class RemoteAPIError(VideoIndexError):
    """A remote API still answered with an error after bounded retries."""

    def __init__(self, service: str, reason: str, *, status: int | None = None) -> None:
        self.service = service
        self.status = status
        super().__init__(f"{service}: {reason}")


class IndexCompatibilityError(VideoIndexError):
    """The index on disk was built by an incompatible version or embedding model."""


class VectorStoreError(VideoIndexError):
    """The vector store cannot be reached or used (a bad URL, a server that is down)."""


class IndexStorageError(VideoIndexError):
    """The index folder cannot be used as it is; the message names the file."""


class IndexBusyError(IndexStorageError):
    """Another writer (another process, or another thread of this one) holds the index's
    writer lock, or changed what a read was reading."""


class IndexCorruptError(IndexStorageError):
    """A file of the index is damaged, or the manifest and the vector store disagree."""


class IndexReadOnlyError(IndexStorageError):
    """Writing was asked of an index this process may only read."""


class DiskFullError(IndexStorageError):
    """The disk (or the user's quota) ran out of space while writing the index."""


class AnswerError(VideoIndexError):
    """Generating an answer failed."""


@contextmanager
def one_line_errors(path: Path) -> Iterator[None]:
    """Let the package's errors through; a library failing deep inside becomes one line."""
    try:
        yield
    except VideoIndexError:
        raise
    except Exception as exc:  # the cause stays chained for --debug
        raise MediaError(path, f"failed unexpectedly ({type(exc).__name__}: {exc})") from exc


class MomentRequestError(VideoIndexError, ValueError):
    """A source or span the index cannot give (agent tools, MCP, clip export).

    An unknown or ambiguous source, a time that is not one (``nan`` and ``inf``
    included), times outside the recording, a span longer than allowed, or an agent
    tool's argument of the wrong type; the message names the source (or argument) and
    what to ask instead.
    """
