"""``search`` (a one-shot process) while a real ``ingest`` replaces a large Markdown file.

Reading the folder in place while the writer deleted and added rows, a filtered search
could end in chromadb's ``InternalError: Error finding id`` (a traceback, exit 70) or
take the writer's half-done state for damage. Every search here exits 0 with no
traceback; the loop ends when the writer is done or after :data:`MAX_SEARCHES`.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.service.test_versions import CLI, _first_edition, _manual, _start_ingest

MAX_SEARCHES = 40


@pytest.mark.timeout(900)
def test_searches_exit_0_while_a_file_is_replaced(tmp_path):
    manual, index_dir = _first_edition(tmp_path)
    _manual(manual, "second")
    writer = _start_ingest(manual, index_dir)
    failures, searches = [], 0
    try:
        for n in range(MAX_SEARCHES):
            if writer.poll() is not None and n >= 2:
                break
            argv = [*CLI, "search", "how often is valve 12 checked", "--index", str(index_dir)]
            if n % 2:
                argv += ["--modality", "text,transcript"]
            done = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=300)
            searches += 1
            if done.returncode != 0 or "Traceback" in done.stderr:
                failures.append((done.returncode, done.stderr[-400:]))
    finally:
        _, writer_err = writer.communicate(timeout=600)
    assert writer.returncode == 0, writer_err
    assert searches >= 2 and failures == [], failures
