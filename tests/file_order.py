"""The order in which the test files are handed to the workers: the longest first.

``scripts/test.sh`` runs each file whole in one worker (``--dist=loadfile``) and hands the
files out in collection order (``--no-loadscope-reorder``: xdist's own order is by number
of tests, which put the files of one or two long tests, a killed writer or a live
recording, last, so one worker ran them while the others had finished). Collected
longest first, the short files fill in around the long ones at the end.

The seconds per file are measured (setup, call and teardown of its tests added up) and
kept in ``file_seconds.json``; a run with ``--write-file-seconds`` updates the files it
ran. A file missing from it counts as short and keeps its place among the short ones.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

FILE_SECONDS = Path(__file__).with_name("file_seconds.json")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def longest_files_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place by their file's seconds, longest first (a stable sort: the
    tests of a file stay together and in their order)."""
    seconds = json.loads(FILE_SECONDS.read_text())
    items.sort(key=lambda item: -seconds.get(_file(item.nodeid), 0.0))


class FileSeconds:
    """Adds up the seconds of each file's tests as their reports arrive (in the main
    process, which receives every worker's reports) and writes them at the session's end."""

    def __init__(self) -> None:
        self._seconds: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._seconds[_file(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        seconds = json.loads(FILE_SECONDS.read_text())
        seconds.update({name: round(value, 1) for name, value in self._seconds.items()})
        FILE_SECONDS.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n")
