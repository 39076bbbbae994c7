"""Transcripts out: SRT, WebVTT, text and JSON read back by standard parsers, times within
0.05 s of the stored units, from the index and the command line (the service's
download: tests/service/test_transcript_download.py; MCP: tests/mcp/test_server.py)."""

from __future__ import annotations

import html
import itertools
import json
import shutil

import pytest
import srt
import webvtt

from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.store.library import TranscriptLine
from llama_index_video.store.transcript_export import TRANSCRIPT_FORMATS, render_transcript
from tests_support import TEAM_SYNC

TOLERANCE = 0.05
LINES = [
    TranscriptLine(0.42, 3.987, "Good morning, <everyone> & welcome.", "SPEAKER_1", "en"),
    TranscriptLine(4.0, 7.5, "Two lines\n\nwith a --> inside", None, "en"),
    TranscriptLine(3661.25, 3663.0, "Guten Tag zusammen.", "Diane Lee", "de"),
]


def vtt_seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def parsed(fmt: str, text: str) -> list[tuple[float, float, str, str | None]]:
    """(start, end, text, speaker) of each cue, as a standard parser reads ``text``."""
    if fmt == "srt":
        cues = []
        for cue in srt.parse(text):
            speaker, _, said = cue.content.partition(": ")
            known = said and speaker in {"SPEAKER_1", "Diane Lee"}
            cues.append(
                (
                    cue.start.total_seconds(),
                    cue.end.total_seconds(),
                    said if known else cue.content,
                    speaker if known else None,
                )
            )
        return cues
    if fmt == "vtt":
        return [
            (
                vtt_seconds(c.start),
                vtt_seconds(c.end),
                html.unescape(c.text),
                c.voice,
            )
            for c in webvtt.from_string(text).captions
        ]
    if fmt == "json":
        return [(u["start"], u["end"], u["text"], u["speaker"]) for u in json.loads(text)["units"]]
    raise AssertionError(fmt)


def same(
    lines: list[TranscriptLine],
    cues: list[tuple[float, float, str, str | None]],
    *,
    one_line: bool = True,
) -> None:
    """The cues are the lines: times within the tolerance, the same speakers, the same
    text (on one line where the format's cues cannot hold a blank line)."""
    assert len(cues) == len(lines)
    for line, (start, end, text, speaker) in zip(lines, cues, strict=True):
        assert abs(start - line.start) <= TOLERANCE and abs(end - line.end) <= TOLERANCE
        assert text == (" ".join(line.text.split()) if one_line else line.text)
        assert speaker == line.speaker


@pytest.mark.parametrize("fmt", ["srt", "vtt", "json"])
def test_each_format_reads_back_with_its_times_text_and_speakers(fmt):
    text = render_transcript(LINES, fmt=fmt, source="/m/meeting.mp4")
    same(LINES, parsed(fmt, text), one_line=fmt != "json")


def test_webvtt_marks_the_units_heard_in_another_language_and_names_the_source():
    text = render_transcript(LINES, fmt="vtt", source="/m/a<b>.mp4")
    assert text.startswith("WEBVTT\n\nNOTE /m/a&lt;b&gt;.mp4, heard in en+de\n")
    raw = [c.raw_text for c in webvtt.from_string(text).captions]
    assert raw[2] == "<v Diane Lee><lang de>Guten Tag zusammen.</lang>"
    assert "<lang" not in raw[0] + raw[1]


def test_text_and_json_carry_times_speakers_and_languages():
    text = render_transcript(LINES, fmt="txt", source="meeting.mp4").splitlines()
    assert text[0] == "[00:00-00:03] SPEAKER_1: Good morning, <everyone> & welcome."
    assert text[1] == "[00:04-00:07] Two lines with a --> inside"
    assert text[2] == "[1:01:01-1:01:03] Diane Lee: Guten Tag zusammen."
    data = json.loads(render_transcript(LINES, fmt="json", source="meeting.mp4"))
    assert data["source"] == "meeting.mp4" and data["languages"] == ["en", "de"]
    assert [u["language"] for u in data["units"]] == ["en", "en", "de"]


def test_an_empty_transcript_is_a_valid_empty_file_in_every_format():
    for fmt in TRANSCRIPT_FORMATS:
        text = render_transcript([], fmt=fmt, source="silent.mp4")
        if fmt in ("srt", "vtt", "json"):
            assert parsed(fmt, text) == []
    with pytest.raises(ValueError, match="choose a transcript format"):
        render_transcript(LINES, fmt="docx", source="x")


def test_the_stored_units_round_trip_from_the_index(example_index):
    lines = example_index.transcript(TEAM_SYNC)
    assert lines and all(line.language == "en" for line in lines)
    for fmt in ("srt", "vtt", "json"):
        same(lines, parsed(fmt, render_transcript(lines, fmt=fmt, source=str(TEAM_SYNC))))


def test_a_span_keeps_the_units_overlapping_it_as_stored(example_index):
    every = example_index.transcript(TEAM_SYNC)
    assert every is not None and len(every) >= 3
    middle = every[1]
    inside = (middle.start + middle.end) / 2
    assert example_index.transcript(TEAM_SYNC, start=inside, end=inside) == [middle]
    assert example_index.transcript(TEAM_SYNC, start=middle.start + 0.01) == [
        line for line in every if line.end >= middle.start + 0.01
    ]
    assert example_index.transcript(TEAM_SYNC, end=middle.end - 0.01) == every[:2]
    with pytest.raises(MomentRequestError, match="unknown source"):
        example_index.transcript("/no/such.mp4", start=0, end=5)


def test_the_command_prints_or_writes_a_span_by_file_name(example_index, capsys, tmp_path):
    every = example_index.transcript(TEAM_SYNC)
    assert every is not None
    span = ["--from", "00:10", "--to", "20", "--index", str(example_index.path)]
    assert main(["transcript", "team_sync.mp3", "--format", "srt", *span]) == 0
    expected = [line for line in every if line.end >= 10 and line.start <= 20]
    same(expected, parsed("srt", capsys.readouterr().out))
    out = tmp_path / "team.vtt"
    assert main(["transcript", str(TEAM_SYNC), "--format", "vtt", "-o", str(out), *span[4:]]) == 0
    assert "the transcript of team_sync.mp3" in capsys.readouterr().out
    same(every, parsed("vtt", out.read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nothing.mp4"], "nothing.mp4: unknown source"),
        (["team_sync.mp3", "--from", "20", "--to", "10"], "--to must come after --from"),
        (
            ["team_sync.mp3", "-o", "/no/such/folder/t.srt"],
            "t.srt: its folder /no/such/folder does",
        ),
    ],
)
def test_bad_requests_end_in_one_line(example_index, capsys, argv, says):
    assert main(["transcript", *argv, "--index", str(example_index.path)]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@pytest.mark.parametrize("value", ["nan", "inf", "1e309"])
def test_the_command_refuses_a_time_that_is_not_finite(example_index, capsys, value):
    with pytest.raises(SystemExit) as stopped:
        main(["transcript", "team_sync.mp3", "--to", value, "--index", str(example_index.path)])
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and f"argument --to: '{value}' is not a time" in said


def chapter(start: float, end: float, title: str):
    from llama_index_video.results import Chapter

    return Chapter("meeting.mp4", start, end, title, f"[meeting.mp4 {start}]", title, "id")


CHAPTERS = [chapter(0.0, 4.0, "Welcome & <agenda>"), chapter(4.0, 3663.0, "Planting")]


def test_chapters_go_where_each_format_has_room_for_them():
    txt = render_transcript(LINES, fmt="txt", source="meeting.mp4", chapters=CHAPTERS)
    assert txt.splitlines()[:3] == [
        "## 00:00 Welcome & <agenda>",
        "",
        "[00:00-00:03] SPEAKER_1: Good morning, <everyone> & welcome.",
    ]
    assert txt.splitlines()[3:6] == ["", "## 00:04 Planting", ""]
    vtt = render_transcript(LINES, fmt="vtt", source="meeting.mp4", chapters=CHAPTERS)
    assert "NOTE chapter 00:04-1:01:03: Planting\n\n00:00:04.000 --> 00:00:07.500" in vtt
    assert "NOTE chapter 00:00-00:04: Welcome &amp; &lt;agenda&gt;" in vtt
    same(LINES, parsed("vtt", vtt))  # notes are no cues
    data = json.loads(render_transcript(LINES, fmt="json", source="m", chapters=CHAPTERS))
    assert data["chapters"] == [
        {"start": 0.0, "end": 4.0, "title": "Welcome & <agenda>"},
        {"start": 4.0, "end": 3663.0, "title": "Planting"},
    ]
    srt_text = render_transcript(LINES, fmt="srt", source="m", chapters=CHAPTERS)
    assert srt_text == render_transcript(LINES, fmt="srt", source="m")  # no place in SubRip
    # A span that starts inside a chapter opens with that chapter's heading.
    later = render_transcript(LINES[2:], fmt="txt", source="m", chapters=CHAPTERS)
    assert later.startswith("## 00:04 Planting\n\n[1:01:01-1:01:03]")


def test_a_recordings_chapters_come_with_its_transcript_file(tmp_path, built_meeting, embed_model):
    from llama_index_video.index import VideoIndex
    from tests.chapters.meeting_script import TOPIC_SECONDS, TOPICS

    folder = tmp_path / "index"
    shutil.copytree(built_meeting[1], folder)
    index = VideoIndex(folder, embed_model=embed_model)
    try:
        data = json.loads(index.transcript_file("meeting.wav", fmt="json"))
        starts = [c["start"] for c in data["chapters"]]
        assert len(starts) == len(TOPICS)
        expected = [i * TOPIC_SECONDS for i in range(len(TOPICS))]
        assert all(abs(a - b) <= 30 for a, b in zip(starts, expected, strict=True))
        span = json.loads(index.transcript_file("meeting.wav", fmt="json", start=300, end=400))
        assert len(span["chapters"]) == 1 and span["chapters"][0]["start"] <= 300
        assert all(u["end"] >= 300 and u["start"] <= 400 for u in span["units"])
        text = index.transcript_file("meeting.wav", fmt="txt")
        assert text.count("\n## ") + text.startswith("## ") == len(TOPICS)
    finally:
        index.close()


RUN_ON = (
    "so I feature a lot of rappers on the show but not nearly enough rockers and we are "
    "here today to make some recommendations and settle some age old debates about the best "
    "records of the decade and the songs that everybody still sings along to in the car on "
    "long drives across the country with friends who never agree about anything at all and "
    "that is exactly why we keep coming back every single week to talk about it"
)
"""80 words and no sentence end: its units are cut inside it, each after the first
beginning with the last words of the one before (carried for retrieval)."""


def test_words_carried_between_units_are_said_once_and_cues_never_overlap(
    tmp_path, make_wav, embed_model
):
    """A new user's real interview exported "on the show," twice, in cues overlapping by
    0.48 s: a run-on sentence's units repeat words for retrieval, not for reading."""
    import numpy as np

    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    audio = make_wav(tmp_path / "talk.wav", np.zeros(50 * 16_000, np.float32))
    (tmp_path / "talk.srt").write_text(f"1\n00:00:02,000 --> 00:00:40,000\n{RUN_ON}\n")
    folder = tmp_path / "index"
    index = VideoIndex(
        folder, embed_model=embed_model, reader=VideoReader(media_dir=folder / "media", frames=None)
    )
    try:
        assert index.ingest([audio]).ok
        stored = index.vector_store.client.get(where={"modality": "transcript"})["documents"]
        lines = index.transcript("talk.wav")
        cues = list(srt.parse(index.transcript_file("talk.wav", fmt="srt")))
    finally:
        index.close()
    assert sum(len(text.split()) for text in stored) > len(RUN_ON.split())  # words carried
    assert len(lines) == len(stored) > 1
    assert " ".join(line.text for line in lines) == RUN_ON
    assert all(b.start >= a.end for a, b in itertools.pairwise(lines))
    assert all(b.start >= a.end for a, b in itertools.pairwise(cues))
    assert lines[0].start == pytest.approx(2.0, abs=TOLERANCE)
    assert lines[-1].end == pytest.approx(40.0, abs=TOLERANCE)
