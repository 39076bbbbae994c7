"""The span a summary says, where the index never stored the recording's length.

Such an index (one made before lengths were stored, or repaired from its rows) is the
constructed meeting's with the length taken out of its manifest: a summary "from 12:00"
then ends where the last moment said ends (15:48), not at 12:00.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.store.folder import MANIFEST_FILE
from tests.chapters.meeting_script import TOPIC_SECONDS, TOPICS
from tests.chapters.test_chapters_ingest import _index

LAST_SAID = len(TOPICS) * TOPIC_SECONDS - 12  # the last 8 s cue starts 20 s before the end


@pytest.fixture(scope="module")
def lengthless_index(meeting_copy, embed_model) -> Iterator[tuple[Any, Any]]:
    audio, folder = meeting_copy
    with sqlite3.connect(folder / MANIFEST_FILE) as manifest:
        manifest.execute("UPDATE files SET duration = NULL")
    index = _index(folder, embed_model)
    assert index.recording(audio).duration is None
    yield index, audio
    index.close()


def test_an_open_end_is_where_the_last_moment_said_ends(lengthless_index):
    index, audio = lengthless_index
    summary = index.summarize(audio, start=3 * TOPIC_SECONDS)
    assert summary.start == 3 * TOPIC_SECONDS
    assert summary.end == pytest.approx(LAST_SAID, abs=1.0)
    assert summary.span == "12:00-15:48"
    assert all(line.start >= 3 * TOPIC_SECONDS - 10 for line in summary.action_items)


def test_the_command_line_says_the_span_and_an_open_end_it_cannot_place(lengthless_index, capsys):
    index, audio = lengthless_index
    asked = ["summarize", audio.name, "--index", str(index.path), "--from", "12:00"]
    assert main(asked) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"Summary of {audio} 12:00-15:48 ")
    assert main([*asked, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["start"] == 720 and printed["end"] == pytest.approx(LAST_SAID, abs=1.0)
    # nothing said after 16:00: the end is open, and the JSON's end is null
    assert main([*asked[:-1], "16:00", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["start"], printed["end"]) == (960, None)
    assert main([*asked[:-1], "16:00"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"Summary of {audio} 16:00-end ")


def test_a_span_of_no_length_is_refused_in_one_line(lengthless_index, capsys):
    index, audio = lengthless_index
    with pytest.raises(MomentRequestError, match="give start < end"):
        index.summarize(audio, start=300, end=300)  # not an empty summary
    asked = ["summarize", audio.name, "--index", str(index.path), "--from", "8:00", "--to", "4:00"]
    assert main(asked) != 0
    error = capsys.readouterr().err.strip()
    assert "give start < end" in error and "\n" not in error
