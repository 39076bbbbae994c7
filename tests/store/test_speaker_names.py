"""Naming a speaker: ``speakers name SOURCE SPEAKER_2 "Ben Okafor"`` and what then shows it.

The recording is three espeak-ng voices taking nine known turns
(tests/fixtures/make_speech.py; Ana, Ben, Carl speak first in that order, so they are
SPEAKER_1, SPEAKER_2 and SPEAKER_3); its ``.srt`` sidecar gives the words and
Resemblyzer labels the voices for real.
"""

from __future__ import annotations

import json
import shutil

import pytest
from fastapi.testclient import TestClient

from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.index import VideoIndex
from llama_index_video.service.app import create_app
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.store.speaker_names import check_speaker_name
from llama_index_video.store.tokens import words
from tests_support import ROOT

SPEECH = ROOT / "tests" / "fixtures" / "speech"
BEN = [
    t for t in json.loads((SPEECH / "dialogue.json").read_text())["turns"] if t["speaker"] == "Ben"
]


@pytest.fixture
def index(built_dialogue, tmp_path, embed_model):
    shutil.copytree(built_dialogue, tmp_path / "named")
    opened = VideoIndex(tmp_path / "named" / "index", embed_model=embed_model)
    yield opened
    opened.close()


def unit_speakers(index) -> dict[float, str]:
    rows = index.vector_store._collection.get(include=["metadatas"])
    return {
        round(m[schema.START_S], 1): m[schema.SPEAKER]
        for m in rows["metadatas"]
        if m[schema.MODALITY] == "transcript"
    }


def test_a_named_label_is_the_name_in_every_unit_and_view(index, capsys):
    before = unit_speakers(index)
    ben_units = {start for start, speaker in before.items() if speaker == "SPEAKER_2"}
    assert len(ben_units) == len(BEN)
    assert (
        main(["speakers", "name", "dialogue.ogg", "2", "Ben  Okafor", "--index", str(index.path)])
        == 0
    )
    assert capsys.readouterr().out.strip() == (
        f"named    SPEAKER_2 'Ben Okafor' in dialogue.ogg: {len(BEN)} units"
    )
    index.reopen()
    after = unit_speakers(index)
    assert {s for s, who in after.items() if who == "Ben Okafor"} == ben_units
    assert {s: w for s, w in after.items() if s not in ben_units} == {
        s: w for s, w in before.items() if s not in ben_units
    }
    hits = index.search("the budget for seeds and tools", speakers=["Ben Okafor"], top_k=3)
    assert hits and {h.speaker for h in hits} == {"Ben Okafor"}
    assert any(h.start <= 6.0 <= h.end for h in hits)
    assert not index.search("the budget for seeds and tools", speakers=["SPEAKER_2"])
    lexical = index.lexical.snapshot()
    assert lexical is not None
    found = lexical.search(words("rain barrel water bill"), top_k=3, speakers=["Ben Okafor"])
    assert found  # the lexical index has the name too
    lines = index.transcript(index.library()[0].path)
    assert {line.speaker for line in lines} == {"SPEAKER_1", "Ben Okafor", "SPEAKER_3"}
    assert index.library()[0].speakers == ["SPEAKER_1", "SPEAKER_3", "Ben Okafor"]
    answer = index.ask("How much is the budget for seeds and tools?")
    assert answer.citations[0].speaker == "Ben Okafor"


def test_a_name_is_renamed_and_the_cli_search_takes_it(index, capsys):
    assert index.name_speaker("dialogue.ogg", "SPEAKER_3", "Carl") == 3
    assert index.name_speaker("dialogue.ogg", "Carl", "Carl Jensen") == 3
    assert index.name_speaker("dialogue.ogg", "SPEAKER_3", "Carl Jensen") == 3  # again: done
    code = main(["search", "raised beds", "--index", str(index.path), "--json",
                 "--speaker", "carl jensen, Carl Jensen"])  # fmt: skip
    hits = json.loads(capsys.readouterr().out)
    assert code == 0 and hits and {h["speaker"] for h in hits} == {"Carl Jensen"}


def test_unknown_speakers_sources_and_bad_names_are_one_line(index, capsys):
    with pytest.raises(MomentRequestError, match="its speakers: SPEAKER_1, SPEAKER_2, SPEAKER_3"):
        index.name_speaker("dialogue.ogg", "SPEAKER_7", "Dana")
    with pytest.raises(MomentRequestError, match="unknown source"):
        index.name_speaker("nothing.ogg", "SPEAKER_1", "Dana")
    argv = ["speakers", "name", "dialogue.ogg", "1", "Ana, Maria", "--index", str(index.path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "a speaker's name is 1-100 printable characters, no comma" in err
    assert err.count("\n") == 1
    assert set(unit_speakers(index).values()) == {"SPEAKER_1", "SPEAKER_2", "SPEAKER_3"}


def test_labels_and_names_parse():
    assert parse_speakers("2, speaker_3, Diane  Lee") == ["SPEAKER_2", "SPEAKER_3", "Diane Lee"]
    assert check_speaker_name("  Diane   Lee ") == "Diane Lee"
    for bad in ("", "   ", "x" * 101, "Ana\x07B", "Ana, Maria", "speaker_3", "SPEAKER_X", "7"):
        with pytest.raises(ValueError):
            check_speaker_name(bad)
    with pytest.raises(ValueError):
        parse_speakers(" , ")


def test_a_named_voice_is_kept_renamed_with_its_label_and_other_voices_stay_unknown(index, capsys):
    from llama_index_video.store.voice_library import VoiceLibrary

    assert index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben") == len(BEN)
    assert list(VoiceLibrary(index.path).voices) == ["Ben"]
    index.name_speaker("dialogue.ogg", "Ben", "Ben Okafor")  # renamed: the voice follows
    assert list(VoiceLibrary(index.path).voices) == ["Ben Okafor"]
    # Ana's and Carl's synthetic voices are not Ben's: relabel leaves their labels
    done = index.relabel_speakers()
    assert done.named == {"dialogue.ogg": {}} and not done.failed
    index.reopen()
    assert set(unit_speakers(index).values()) == {"SPEAKER_1", "Ben Okafor", "SPEAKER_3"}


def test_the_service_searches_by_a_speaker_named_or_labelled(index):
    assert index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor") == len(BEN)
    question = "the budget for seeds and tools"
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        by_name = client.get("/api/search", params={"q": question, "speaker": "Ben Okafor"})
        by_label = client.get("/api/search", params={"q": question, "speaker": "1, 3"})
    named = by_name.json()
    assert named and {h["speaker"] for h in named} == {"Ben Okafor"}
    assert any(h["start"] <= 6.0 <= h["end"] for h in named)
    assert _as_searched(named) == _as_searched(index.search(question, speakers=["Ben Okafor"]))
    others = index.search(question, speakers=["SPEAKER_1", "SPEAKER_3"])
    assert _as_searched(by_label.json()) == _as_searched(others)


def _as_searched(hits: list) -> list[tuple]:
    """Each hit's recording, span, speaker and score, whether a SearchHit or served JSON."""
    found = [hit if isinstance(hit, dict) else hit.to_dict() for hit in hits]
    return [(h["source"], h["start"], h["end"], h["speaker"], h["score"]) for h in found]
