"""Extractive summaries of the constructed meeting: what was decided and who does what,
each line cited to a moment that exists; the check that rejects one that does not."""

from __future__ import annotations

import json

import pytest

from llama_index_video.cli.main import main
from llama_index_video.store.library import TranscriptLine
from llama_index_video.summaries.extractive import extractive_summary
from llama_index_video.summaries.summary import SummaryLine, citation_holds
from tests.chapters.meeting_script import SAID, TOPIC_SECONDS, TOPICS, cues
from tests.chapters.test_chapters_ingest import _index


@pytest.fixture(scope="module")
def meeting_index(meeting_copy, embed_model):
    audio, folder = meeting_copy
    index = _index(folder, embed_model)
    yield index, audio
    index.close()


def test_the_summary_finds_the_decisions_actions_and_open_questions(meeting_index):
    index, audio = meeting_index
    summary = index.summarize(audio)
    assert summary is not None and summary.extractive
    times = {text: start for start, _, text, _ in cues()}
    for kind, opening in SAID:
        lines = getattr(summary, kind)
        (found,) = [line for line in lines if line.text.startswith(opening)]
        said_at = next(start for text, start in times.items() if text.startswith(opening))
        assert abs(found.start - said_at) <= 1.0
    (quotes,) = [a for a in summary.action_items if "quotes" in a.text]
    assert quotes.by == "by Friday"
    (plan,) = [a for a in summary.action_items if "campaign plan" in a.text]
    assert plan.by == "for next meeting"


def test_the_overview_has_a_line_per_chapter_inside_it(meeting_index):
    index, audio = meeting_index
    summary = index.summarize(audio)
    chapters = index.chapters(audio)
    assert summary is not None and chapters
    assert len(summary.overview) == len(chapters) == len(TOPICS)
    for line, chapter in zip(summary.overview, chapters, strict=True):
        assert chapter.start <= line.start <= chapter.end


def test_every_citation_holds_and_a_made_up_one_does_not(meeting_index):
    index, audio = meeting_index
    summary = index.summarize(audio)
    units = index.transcript(audio) or []
    assert summary is not None
    lines = [line for section in summary.sections().values() for line in section]
    assert lines
    assert all(citation_holds(line, audio.name, units) for line in lines)
    beyond = SummaryLine("Made up.", f"[{audio.name} 59:00-59:10]", 3540.0, 3550.0)
    other_file = SummaryLine("Elsewhere.", "[other.wav 00:10-00:18]", 10.0, 18.0)
    assert not citation_holds(beyond, audio.name, units)
    assert not citation_holds(other_file, audio.name, units)


def test_a_stretch_is_summarized_alone(meeting_index):
    index, audio = meeting_index
    summary = index.summarize(audio, start=TOPIC_SECONDS, end=2 * TOPIC_SECONDS)
    assert summary is not None
    lines = [line for section in summary.sections().values() for line in section]
    assert lines
    assert all(TOPIC_SECONDS - 10 <= line.start <= 2 * TOPIC_SECONDS for line in lines)
    assert [a.text for a in summary.action_items] == [
        "I'll send the charging dock quotes to everyone by Friday."
    ]


def test_a_stretch_s_summary_says_its_span_and_a_whole_one_says_none(meeting_index):
    index, audio = meeting_index
    stretch = index.summarize(audio, start=TOPIC_SECONDS, end=2 * TOPIC_SECONDS)
    assert (stretch.start, stretch.end) == (TOPIC_SECONDS, 2 * TOPIC_SECONDS)
    from_only = index.summarize(audio, start=TOPIC_SECONDS)
    duration = index.recording(audio).duration
    assert duration is not None and abs(duration - len(TOPICS) * TOPIC_SECONDS) <= 30
    assert (from_only.start, from_only.end) == (TOPIC_SECONDS, duration)
    whole = index.summarize(audio)
    assert whole.start is None and whole.end is None
    assert "start" not in whole.to_dict() and "end" not in whole.to_dict()


def test_without_cue_phrases_there_are_no_decisions_and_no_error():
    units = [
        TranscriptLine(i * 10.0, i * 10.0 + 8, "The weather was mild today.") for i in range(5)
    ]
    summary = extractive_summary("/m/talk.wav", units, [])
    assert summary.decisions == summary.action_items == summary.open_questions == ()
    assert len(summary.overview) == 1
    assert extractive_summary("/m/empty.wav", [], []).overview == ()


def test_the_command_line_prints_the_summary_as_text_and_json(meeting_index, capsys):
    index, audio = meeting_index
    folder = str(index.path)
    assert main(["summarize", audio.name, "--index", folder]) == 0
    text = capsys.readouterr().out
    assert "extractive" in text and "Decisions:" in text and "Action items:" in text
    assert f"[{audio.name} " in text
    assert main(["summarize", str(audio), "--index", folder, "--json", "--from", "4:00"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["extractive"] is True
    assert {"overview", "decisions", "action_items", "open_questions"} <= set(printed)
    assert all(line["start"] >= TOPIC_SECONDS - 10 for line in printed["decisions"])
    assert printed["start"] == TOPIC_SECONDS
    assert abs(printed["end"] - len(TOPICS) * TOPIC_SECONDS) <= 30


def test_the_command_line_heading_names_the_span_summarized(meeting_index, capsys):
    index, audio = meeting_index
    folder = str(index.path)
    assert main(["summarize", audio.name, "--index", folder, "--from", "4:00", "--to", "8:00"]) == 0
    heading = capsys.readouterr().out.splitlines()[0]
    assert heading.startswith("Summary of ") and " 04:00-08:00 (extractive" in heading
    assert main(["summarize", audio.name, "--index", folder]) == 0
    heading = capsys.readouterr().out.splitlines()[0]
    assert heading.endswith(f"{audio.name} (extractive: the recording's own sentences)")
    assert main(["summarize", audio.name, "--index", folder, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "start" not in printed and "end" not in printed


def test_the_agent_tool_lists_the_chapters_and_the_summary_cited(meeting_index):
    from llama_index_video.agents.tool_spec import VideoToolSpec

    index, audio = meeting_index
    found = json.loads(VideoToolSpec(index).summarize_recording(audio.name))
    assert found["extractive"] is True
    chapters = [item for item in found["items"] if item["section"] == "chapter"]
    assert len(chapters) == len(TOPICS)
    decisions = [item["text"] for item in found["items"] if item["section"] == "decisions"]
    assert any(text.startswith("We decided to fix the budget") for text in decisions)
    assert all(item["label"].startswith(f"[{audio.name} ") for item in found["items"])
