"""The ``llama-index-video`` command: ``ingest``, ``search``, ``ask``, ``serve``, ``verify``.

It parses arguments, builds the library objects and prints; every error the package
raises on purpose ends the command with one line on stderr and a non-zero status
(``--debug`` shows the traceback). Output piped to a reader that stops reading
(``| head``) ends the command quietly, with status 141 as a shell reports SIGPIPE. API
keys are masked in everything it prints and logs, tracebacks included
(:mod:`llama_index_video.api_keys`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from llama_index_video.api_keys import ScrubbingFormatter, scrub, scrubbed_traceback
from llama_index_video.cli.commands import COMMANDS
from llama_index_video.cli.parser import build_parser
from llama_index_video.cli.status import (
    EXIT_BUG,
    EXIT_CLOSED_PIPE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
)
from llama_index_video.errors import VideoIndexError

READ_ONLY_COMMANDS = frozenset({"search", "ask", "list", "chapters", "summarize"})
"""Commands that write nothing but their output (the console script ends them faster)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status."""
    return _run(build_parser().parse_args(argv))


def console() -> NoReturn:
    """The ``llama-index-video`` executable: :func:`main` in a process of its own.

    A read-only command runs with the cyclic garbage collector off and leaves its
    objects out of the collections Python makes while it shuts down: with LlamaIndex,
    pydantic and Chroma loaded those cost about 0.3 s while running and 0.6-1 s at
    exit, a third of a cold ``search``, to free memory the process is about to give
    back anyway. Shutdown itself still happens (``atexit`` handlers, logging and output
    flushed, objects freed by reference counting); only objects caught in reference
    cycles are left to the operating system, so commands that write files keep the
    normal collection. Never done in :func:`main`, which callers run inside their
    own process.
    """
    args = build_parser().parse_args()
    read_only = args.command in READ_ONLY_COMMANDS
    if read_only:
        gc.disable()
    code = _run(args)
    if read_only:
        gc.freeze()
    sys.exit(code)


def _run(args: argparse.Namespace) -> int:
    _configure_logging(debug=args.debug)
    try:
        return int(COMMANDS[args.command](args))
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `| head` read what it wanted: stop quietly, as cat does
        _discard_stdout()
        return EXIT_CLOSED_PIPE
    except VideoIndexError as exc:
        if args.debug:
            print(scrubbed_traceback(exc), end="", file=sys.stderr)
        else:
            print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: show where, but an SDK's message may hold the key
        storage = _storage_error(exc, args)
        if storage is not None and not args.debug:
            print(f"error: {scrub(str(storage))}", file=sys.stderr)
            return EXIT_ERROR
        print(scrubbed_traceback(exc), end="", file=sys.stderr)
        return EXIT_BUG


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so the flush at exit finds no closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file behind stdout (a caller's own stream)
        pass


def _storage_error(exc: Exception, args: argparse.Namespace) -> VideoIndexError | None:
    """What the disk or a database of the index folder said (disk full, read-only,
    damaged), if ``exc`` is that, as one line naming the folder."""
    from llama_index_video.store.storage_errors import storage_error

    folder = getattr(args, "index", None)
    return None if folder is None else storage_error(exc, Path(folder))


def _configure_logging(*, debug: bool) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(
        ScrubbingFormatter(
            "%(levelname)s %(name)s: %(message)s" if debug else "warning: %(message)s"
        )
    )
    level = logging.DEBUG if debug else logging.WARNING
    # On the handler too: a library that sets its own logger to DEBUG (bm25s does) would
    # otherwise print its debug lines as warnings.
    handler.setLevel(level)
    logging.basicConfig(level=level, handlers=[handler])
    if not debug:
        # Every command that ingests prints each file's outcome as a report line; the
        # ingest's own warning for a failed file would say it a second time.
        logging.getLogger("llama_index_video.store.ingest").setLevel(logging.ERROR)
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


if __name__ == "__main__":
    console()
