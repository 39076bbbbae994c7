"""Chapters made at ingest, read back, searched, and re-made by ``verify --repair``.

The recording is 16 minutes of quiet with a sidecar subtitle file of four known
topics (:mod:`tests.chapters.meeting_script`); the embedding is the real local model.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import content_nodes
from tests.chapters.meeting_script import TOPIC_SECONDS, TOPICS, length

TOLERANCE = 30.0


@pytest.fixture(scope="module")
def meeting(built_meeting):
    return built_meeting[0]


@pytest.fixture(scope="module")
def meeting_index(meeting_copy, embed_model):
    """The ingest's index of the meeting (:func:`tests.conftest.built_meeting`)."""
    index = _index(meeting_copy[1], embed_model)
    yield index
    index.close()


def test_a_meeting_of_four_topics_gets_four_chapters_at_their_changes(meeting_index, meeting):
    chapters = meeting_index.chapters(meeting)
    assert chapters is not None
    assert len(chapters) == len(TOPICS)
    for number, chapter in enumerate(chapters):
        assert abs(chapter.start - number * TOPIC_SECONDS) <= TOLERANCE
    assert [c.start for c in chapters] == sorted(c.start for c in chapters)
    assert chapters[-1].end == pytest.approx(length(), abs=TOLERANCE)


def test_each_chapter_title_names_its_topic(meeting_index, meeting):
    chapters = meeting_index.chapters(meeting) or []
    for chapter, topic in zip(chapters, TOPICS, strict=True):
        words = {w.strip(",").lower() for w in chapter.title.split()}
        topic_words = {topic, topic.rstrip("s"), "batteries" if topic == "battery" else topic}
        assert words & topic_words, (chapter.title, topic)


def test_units_know_their_chapter_and_chapters_are_rows_of_their_file(meeting_index, meeting):
    chapters = meeting_index.chapters(meeting) or []
    nodes = content_nodes(meeting_index.vector_store, _content_hash(meeting_index, meeting))
    units = [n for n in nodes if n.metadata[schema.MODALITY] == "transcript"]
    by_id = {c.node_id: c for c in chapters}
    for unit in units:
        chapter = by_id[unit.metadata[schema.CHAPTER]]
        middle = (unit.metadata[schema.START_S] + unit.metadata[schema.END_S]) / 2
        assert chapter.start <= middle <= chapter.end
    entry = next(e for e in meeting_index.library() if e.source == str(meeting))
    assert entry.moments.get("chapter") == len(chapters)


def test_a_topic_search_by_modality_finds_its_chapter(meeting_index):
    hits = meeting_index.search("rechargeable battery and charging dock", modalities=["chapter"])
    assert hits
    assert hits[0].modality == "chapter"
    assert abs(hits[0].start - TOPIC_SECONDS) <= TOLERANCE


def test_a_default_search_returns_moments_not_chapters(meeting_index):
    hits = meeting_index.search("the colour of the rubber case", top_k=10)
    assert hits
    assert {h.modality for h in hits} == {"transcript"}


def test_a_hit_says_which_chapter_it_belongs_to(meeting_index, meeting):
    chapters = meeting_index.chapters(meeting)
    hits = meeting_index.search("solar cells on the top charge the battery in daylight")
    assert hits
    for hit in hits:
        (holding,) = [c for c in chapters if c.start <= (hit.start + hit.end) / 2 <= c.end]
        assert hit.chapter == holding.title
    assert hits[0].to_dict()["chapter"] == chapters[1].title


def test_a_short_recording_gets_no_chapters(tmp_path, make_wav, embed_model):
    audio = make_wav(tmp_path / "short.wav", np.zeros(60 * 16_000, np.float32))
    (tmp_path / "short.srt").write_text(
        "1\n00:00:01,000 --> 00:00:05,000\nThe budget is fixed.\n\n"
        "2\n00:00:30,000 --> 00:00:35,000\nThe battery lasts two years.\n",
        encoding="utf-8",
    )
    folder = tmp_path / "index"
    index = _index(folder, embed_model)
    try:
        assert index.ingest([audio]).ok
        assert index.chapters(audio) == []
        with pytest.raises(MomentRequestError, match="unknown source"):
            index.chapters(tmp_path / "never_indexed.wav")
    finally:
        index.close()


def test_verify_repair_makes_lost_chapters_again(tmp_path, built_meeting, embed_model):
    meeting, built = built_meeting
    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    index = _index(folder, embed_model)
    try:
        before = index.chapters(meeting) or []
        assert len(before) == len(TOPICS)
        index.vector_store.delete_nodes([before[1].node_id])
        assert len(index.chapters(meeting) or []) == len(TOPICS) - 1
        check, report = index.verify(repair=True)
        assert check.damaged and report is not None and report.ok
        after = index.chapters(meeting) or []
        assert [(c.start, c.end, c.title) for c in after] == [
            (c.start, c.end, c.title) for c in before
        ]
    finally:
        index.close()


def test_the_command_line_prints_chapters_as_json_youtube_and_webvtt(
    meeting_index, meeting, capsys
):
    folder = str(meeting_index.path)
    assert main(["chapters", str(meeting), "--index", folder, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert len(printed) == len(TOPICS)
    assert {"source", "start", "end", "title", "label"} <= set(printed[0])
    assert main(["chapters", str(meeting), "--index", folder, "--format", "youtube"]) == 0
    youtube = capsys.readouterr()
    lines = youtube.out.splitlines()
    assert youtube.err == ""  # four chapters of minutes: YouTube shows them
    assert lines[0].startswith("00:00 ")
    assert len(lines) == len(TOPICS)
    assert abs(schema.parse_timestamp(lines[1].split()[0]) - TOPIC_SECONDS) <= TOLERANCE
    assert main(["chapters", str(meeting), "--index", folder, "--format", "vtt"]) == 0
    vtt = capsys.readouterr().out
    assert vtt.startswith("WEBVTT\n\n1\n00:00:00.000 --> ")
    assert vtt.count(" --> ") == len(TOPICS)


def test_the_command_line_says_when_a_source_is_not_indexed(meeting_index, tmp_path, capsys):
    code = main(["chapters", str(tmp_path / "other.wav"), "--index", str(meeting_index.path)])
    assert code == 2
    assert "unknown source" in capsys.readouterr().err


def _index(folder, embed_model) -> VideoIndex:
    """An index of transcripts only (no frames), with the real local embedding."""
    return VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "media", frames=None),
        snapshot_reads=False,  # its stores are changed by hand, as a killed writer leaves them
    )


def _content_hash(index: VideoIndex, source) -> str:
    from llama_index_video.store.recording_names import find_source

    return find_source(index.manifest, str(source))[0].content_hash
