"""A question that names a speaker's role or name searches what that speaker said, when
asked (``by_named_speaker``, ``search --by-named-speaker``: off by default, as on real
meetings it found the answer less often).

Roles as QMSum's meetings tag speakers; names as ``speakers name`` writes them, on the
three-voice dialogue (tests/fixtures/make_speech.py: Ana, Ben, Carl, labelled for real
by Resemblyzer; Ben is SPEAKER_2).
"""

from __future__ import annotations

import json

import pytest

from llama_index_video import schema
from llama_index_video.agents.tool_spec import VideoToolSpec
from llama_index_video.cli.main import main
from llama_index_video.search.speaker_named import named_speakers
from tests.store.test_speaker_names import BEN, index  # noqa: F401  (the fixture)

ROLES = ["Project Manager", "Marketing", "Industrial Designer", "User Interface"]
ASKED = "What did Ben say about the water for the garden?"


def _never() -> list[str]:
    raise AssertionError("the speakers were looked up for a question that names nobody")


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What did the designer say about the shape?", ["Industrial Designer"]),
        ("What did Marketing think of the price?", ["Marketing"]),
        ("According to the project manager, when is the next meeting?", ["Project Manager"]),
        ("What was the project manager's view on the budget?", ["Project Manager"]),
        ("What did they say about the marketing campaign?", []),
        ("Did the user interface group propose a screen?", ["User Interface"]),
        ("What is the design of the interface?", []),
    ],
)
def test_a_role_in_the_speaking_part_names_its_speaker(question, named):
    assert named_speakers(question, lambda: ROLES) == named


def test_labels_and_names_are_named_and_plain_questions_look_nobody_up():
    speakers = ["SPEAKER_1", "SPEAKER_2", "Ben Okafor"]
    assert named_speakers("What did speaker 2 say about seeds?", lambda: speakers) == ["SPEAKER_2"]
    assert named_speakers("What did Ben Okafor suggest?", lambda: speakers) == ["Ben Okafor"]
    assert named_speakers("Ben's idea for the party?", lambda: speakers) == ["Ben Okafor"]
    grads = ["Grad A", "Grad C", "Grad D", "Professor B"]
    assert named_speakers("What did Grad D think about it?", lambda: grads) == ["Grad D"]
    assert named_speakers("What did the professor think?", lambda: grads) == ["Professor B"]
    assert named_speakers("rain barrel water bill", _never) == []
    assert named_speakers("What is the budget for Ben?", _never) == []


def _ben_starts() -> set[float]:
    return {round(t["start"]) for t in BEN}


def test_search_and_retriever_keep_the_named_speakers_turns_only_when_asked(index):  # noqa: F811
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.reopen()

    plain = index.search(ASKED, top_k=9)
    assert {h.speaker for h in plain} - {"Ben Okafor"}, "off by default: everyone is searched"
    hits = index.search(ASKED, top_k=9, by_named_speaker=True)
    assert hits and {h.speaker for h in hits} == {"Ben Okafor"}
    assert any(abs(h.start - 19.5) <= 1.5 for h in hits)  # "We should buy a rain barrel"
    assert all(round(h.start) in _ben_starts() or h.modality != "transcript" for h in hits)

    nodes = index.as_retriever(top_k=9, by_named_speaker=True).retrieve(ASKED)
    assert nodes and {n.node.metadata[schema.SPEAKER] for n in nodes} == {"Ben Okafor"}
    retriever = index.as_retriever(top_k=9, by_named_speaker=True)
    nobody = retriever.retrieve("What did they say about the compost heap?")
    assert any(n.node.metadata.get(schema.SPEAKER) != "Ben Okafor" for n in nobody)
    everyone = index.as_retriever(top_k=9).retrieve(ASKED)
    assert any(n.node.metadata.get(schema.SPEAKER) != "Ben Okafor" for n in everyone)

    moments = json.loads(VideoToolSpec(index).search_moments(ASKED, top_k=9))["moments"]
    assert {m.get("speaker") for m in moments} - {"Ben Okafor"}, "the agent tool searches all"


def test_search_by_named_speaker_on_the_command_line(index, capsys):  # noqa: F811
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.reopen()
    args = ["search", ASKED, "--index", str(index.path), "--top-k", "9", "--json"]
    assert main([*args, "--by-named-speaker"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["speaker"] for h in hits} == {"Ben Okafor"}
    assert main(args) == 0
    assert {h["speaker"] for h in json.loads(capsys.readouterr().out)} - {"Ben Okafor"}


def test_ask_answers_from_what_the_named_speaker_said_when_asked(index, capsys):  # noqa: F811
    # `ask` had neither option: "what did Kyle say about ..." on a real interview was
    # answered from the host's question first.
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.reopen()
    answer = index.ask(ASKED, by_named_speaker=True)
    assert answer.found and {h.speaker for h in answer.hits} == {"Ben Okafor"}
    assert any(abs(h.start - 19.5) <= 1.5 for h in answer.hits)  # "We should buy a rain barrel"
    assert {h.speaker for h in index.ask(ASKED, speakers=["Ben Okafor"]).hits} == {"Ben Okafor"}
    args = ["ask", ASKED, "--index", str(index.path), "--llm", "none", "--json", "--top-k", "9"]
    assert main([*args, "--by-named-speaker"]) == 0
    answered = json.loads(capsys.readouterr().out)
    assert answered["hits"] and {h["speaker"] for h in answered["hits"]} == {"Ben Okafor"}
    assert main([*args, "--speaker", "ben okafor"]) == 0
    assert {h["speaker"] for h in json.loads(capsys.readouterr().out)["hits"]} == {"Ben Okafor"}
    assert main(args) == 0
    assert {h["speaker"] for h in json.loads(capsys.readouterr().out)["hits"]} - {"Ben Okafor"}


def test_the_agents_ask_tool_answers_from_what_one_speaker_said(index):  # noqa: F811
    """The ask tool of agents and MCP clients took no speaker: an agent asked "what did
    Ben say" could not keep the answer to Ben's own words."""
    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.reopen()
    tools = VideoToolSpec(index)
    kept = json.loads(tools.ask(ASKED, top_k=9, speaker="ben okafor"))["citations"]
    assert kept and {c["speaker"] for c in kept} == {"Ben Okafor"}
    assert any(abs(c["start"] - 19.5) <= 1.5 for c in kept)  # "We should buy a rain barrel"
    everyone = json.loads(tools.ask(ASKED, top_k=9))["citations"]
    assert {c["speaker"] for c in everyone} - {"Ben Okafor"}
    assert json.loads(tools.ask(ASKED, speaker="Dana"))["found"] is False  # as for a language


def test_by_named_speaker_says_when_the_index_has_no_speaker_labels(example_index, capsys):
    asked = "What did the narrator say about the cache?"
    args = ["search", asked, "--index", str(example_index.path)]
    assert main([*args, "--by-named-speaker"]) == 0
    assert "this index has no speaker labels" in capsys.readouterr().err
    assert main(args) == 0
    assert "speaker labels" not in capsys.readouterr().err


def test_a_speaker_search_that_finds_nothing_says_why(example_index, index, capsys):  # noqa: F811
    unlabelled = ["search", "the cache", "--index", str(example_index.path), "--speaker", "Ben"]
    assert main(unlabelled) == 0
    captured = capsys.readouterr()
    assert "No relevant moments." in captured.out
    assert "this index has no speaker labels" in captured.err and "--speaker" in captured.err
    labelled = ["search", "rain barrel", "--index", str(index.path), "--speaker"]
    assert main([*labelled, "Diane Lee"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'Diane Lee'" in err
    assert "its speakers: SPEAKER_1, SPEAKER_2, SPEAKER_3" in err
    assert main([*labelled, "speaker_2"]) == 0
    assert capsys.readouterr().err == ""


def test_the_service_answers_from_one_speaker_or_the_one_a_question_names(index):  # noqa: F811
    """POST /api/ask (and its stream) took no speaker: the page and apps calling the
    service could not keep an answer to what one person said."""
    from fastapi.testclient import TestClient

    from llama_index_video.service.app import create_app

    index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
    index.reopen()
    asked = {"question": ASKED, "top_k": 9}
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        by_name = client.post("/api/ask", json={**asked, "speaker": "ben okafor"})
        named = client.post("/api/ask", json={**asked, "by_named_speaker": True})
        everyone = client.post("/api/ask", json=asked)
        unknown = client.post("/api/ask", json={**asked, "speaker": "Dana"})
        streamed = client.post("/api/ask/stream", json={**asked, "speaker": "Ben Okafor"})
    for answered in (by_name, named):
        hits = answered.json()["hits"]
        assert hits and {h["speaker"] for h in hits} == {"Ben Okafor"}
    assert {h["speaker"] for h in everyone.json()["hits"]} - {"Ben Okafor"}
    assert unknown.status_code == 200 and not unknown.json()["found"]  # as for a language
    final = [json.loads(line[6:]) for line in streamed.text.splitlines() if line[:6] == "data: "]
    assert {h["speaker"] for h in final[-1]["hits"]} == {"Ben Okafor"}
