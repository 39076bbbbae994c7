"""A command whose reader went away (``llama-index-video list --json | head``) ends quietly.

The pipe's reading end is closed before the command writes, as ``head`` closes it once
it has its lines: every write then fails. It printed a ``BrokenPipeError`` traceback
(twice: once more at exit) and exited 70, the status of a bug.
"""

from __future__ import annotations

import os
import subprocess
import sys

from llama_index_video.cli.status import EXIT_CLOSED_PIPE
from tests_support import ROOT


def test_a_reader_that_went_away_ends_the_command_quietly(example_index):
    argv = ["list", "--json", "--index", str(example_index.path)]
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "llama_index_video.cli.main", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(write)
    assert done.returncode == EXIT_CLOSED_PIPE
    assert done.stderr == ""
