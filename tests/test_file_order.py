"""The test files are collected longest first, each file's tests together and in order."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tests.file_order import FILE_SECONDS, longest_files_first
from tests_support import ROOT


def test_every_file_timed_is_a_test_file() -> None:
    for name in json.loads(FILE_SECONDS.read_text()):
        assert (ROOT / name).is_file(), f"{name} is gone: run with --write-file-seconds"


def test_the_longest_files_come_first_with_their_tests_in_order() -> None:
    seconds = json.loads(FILE_SECONDS.read_text())
    longest = max(seconds, key=seconds.__getitem__)
    shortest = min((name for name in seconds if seconds[name] > 0), key=seconds.__getitem__)
    untimed = "tests/test_not_timed.py"
    nodeids = [
        f"{untimed}::test_a",
        f"{shortest}::test_a",
        f"{longest}::test_a",
        f"{shortest}::test_b",
        f"{longest}::test_b",
    ]
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]
    longest_files_first(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        f"{longest}::test_a",
        f"{longest}::test_b",
        f"{shortest}::test_a",
        f"{shortest}::test_b",
        f"{untimed}::test_a",
    ]


def test_the_suite_is_collected_longest_file_first(request) -> None:
    seconds = json.loads(FILE_SECONDS.read_text())
    files = list(dict.fromkeys(item.nodeid.split("::")[0] for item in request.session.items))
    timed = [seconds.get(name, 0.0) for name in files]
    assert timed == sorted(timed, reverse=True)
