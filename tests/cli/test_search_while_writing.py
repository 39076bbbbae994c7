"""One-shot readers (``search``, ``ask``, ``transcript``) while a real ``ingest``
replaces a large Markdown file.

Reading the folder in place while the writer deleted and added rows, a filtered search
could end in chromadb's ``InternalError: Error finding id`` (a traceback, exit 70) or
take the writer's half-done state for damage; ``ask`` and ``transcript`` read the same
rows and had no second read at all. Every command here exits 0 with no traceback, each
through :func:`~llama_index_video.cli.reads.read_between_writers`; the loop ends when
the writer is done or after :data:`MAX_READS`.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.service.test_versions import CLI, _first_edition, _manual, _start_ingest

MAX_READS = 45
QUESTION = "how often is valve 12 checked"
READERS = (
    ["search", QUESTION, "--json"],
    ["ask", QUESTION, "--llm", "none", "--json"],
    ["search", QUESTION, "--modality", "text,transcript", "--json"],
    ["transcript", "manual.md", "--format", "json"],
)
"""Taken in turn, so that each reads at every stage of the replacement."""


@pytest.mark.timeout(900)
def test_one_shot_readers_exit_0_while_a_file_is_replaced(tmp_path):
    manual, index_dir = _first_edition(tmp_path)
    _manual(manual, "second")
    writer = _start_ingest(manual, index_dir)
    failures, reads = [], 0
    try:
        for n in range(MAX_READS):
            if writer.poll() is not None and n >= len(READERS):
                break
            argv = [*CLI, *READERS[n % len(READERS)], "--index", str(index_dir)]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            reads += 1
            if done.returncode != 0 or "Traceback" in done.stderr:
                failures.append((argv[3], done.returncode, done.stderr[-400:]))
            else:
                json.loads(done.stdout)  # a whole answer, not a half-written one
    finally:
        _, writer_err = writer.communicate(timeout=600)
    assert writer.returncode == 0, writer_err
    assert reads >= len(READERS) and failures == [], failures
