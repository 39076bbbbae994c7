"""Searching by a speaker's name as a user types it, and a speaker the index lacks.

A name given with ``speakers name`` is the person's in any case, as a question naming
them (``--by-named-speaker``) already takes it: ``--speaker "ben okafor"`` found nothing
and said nothing (the note compared names ignoring case, the search did not). A speaker
the index does not have is named with the ones it has by every door: the command line's
note, the service's 422 (it answered ``[]``, which the page showed as "No relevant
moments.") and the agent tool's error. The recording is the three-voice dialogue of
``tests/store/test_speaker_names.py``, labelled by Resemblyzer for real.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from llama_index_video.agents.tool_spec import VideoToolSpec
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.service.app import create_app
from llama_index_video.speakers.base import as_known, unknown_speakers
from tests.store.test_speaker_names import BEN, _as_searched, index  # noqa: F401

QUESTION = "the budget for seeds and tools"
KNOWN = "its speakers: SPEAKER_1, SPEAKER_3, Ben Okafor"


def test_a_name_in_any_case_finds_what_its_spelling_finds(index, capsys):  # noqa: F811
    assert index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor") == len(BEN)
    spelled = index.search(QUESTION, speakers=["Ben Okafor"])
    assert spelled and {hit.speaker for hit in spelled} == {"Ben Okafor"}
    assert _as_searched(index.search(QUESTION, speakers=["ben okafor"])) == _as_searched(spelled)
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        served = client.get("/api/search", params={"q": QUESTION, "speaker": "BEN OKAFOR"})
    assert _as_searched(served.json()) == _as_searched(spelled)
    index.close()
    argv = ["search", QUESTION, "--speaker", "ben okafor", "--json", "--index", str(index.path)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert _as_searched(json.loads(printed.out)) == _as_searched(spelled)
    assert "note" not in printed.err


def test_a_speaker_the_index_lacks_is_named_with_the_ones_it_has(index, capsys):  # noqa: F811
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        lacking = client.get("/api/search", params={"q": QUESTION, "speaker": "Dana"})
        mixed = client.get("/api/search", params={"q": QUESTION, "speaker": "Dana, ben okafor"})
    assert lacking.status_code == 422
    said = f"no moment of this index was said by 'Dana'; {KNOWN}"
    assert lacking.json()["detail"] == f"speaker: {said}"
    assert mixed.status_code == 200 and {h["speaker"] for h in mixed.json()} == {"Ben Okafor"}
    with pytest.raises(MomentRequestError, match=KNOWN):
        VideoToolSpec(index).search_moments(QUESTION, speaker="Dana")
    index.close()
    assert main(["search", QUESTION, "--speaker", "Dana", "--index", str(index.path)]) == 0
    assert f"note: {said}" in capsys.readouterr().err


def test_speakers_are_spelled_as_the_index_spells_them():
    known = ["SPEAKER_1", "Diane Lee"]
    assert as_known(["diane lee", "speaker_1", "Dana"], known) == ["Diane Lee", "SPEAKER_1", "Dana"]
    assert unknown_speakers(["DIANE LEE", "SPEAKER_1"], known) is None
    assert unknown_speakers(["Dana", "diane lee"], known) == (
        "no moment of this index was said by 'Dana'; its speakers: SPEAKER_1, Diane Lee"
    )
    assert "no speaker labels" in (unknown_speakers(["SPEAKER_1"], []) or "")
