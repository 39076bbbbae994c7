"""An index this process may not write is searched, never written; ingest says so in one line.

The index is really read-only for the process (see the ``read_only_copy`` fixture): a
read-only bind mount as root, a copy without write permissions as any other user.
"""

from __future__ import annotations

import json

import pytest

from tests_support import folder_state

QUESTION = "When do production deploys happen?"


@pytest.fixture
def read_only_index(built_index, read_only_copy):
    """A copy of ``built_index`` this test's processes may read but not write."""
    return read_only_copy(built_index)


def test_read_only_index_is_searchable_and_refuses_ingest(
    read_only_index, run, text_folder, tmp_path, monkeypatch
):
    folder = read_only_index
    with pytest.raises(OSError):
        (folder / "probe").write_text("")  # really read-only
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    before = folder_state(folder)
    code, out, err = run("search", QUESTION, "--index", folder, "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert hits and "Tuesdays" in hits[0]["text"]
    code, out, err = run("ask", QUESTION, "--index", folder, "--llm", "none")
    assert code == 0 and "Tuesdays" in out, err

    code, out, err = run("ingest", text_folder, "--index", folder, "--quiet")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "read-only here" in err and "writable index folder" in err
    assert folder_state(folder) == before

    code, out, err = run("verify", "--repair", "--index", folder)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "read-only here" in err and "verify --repair" in err
    assert folder_state(folder) == before
