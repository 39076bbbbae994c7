"""Chapters for a recording indexed without them, made by ``verify --repair`` from the
stored units, and a repair killed part-way finished by the next.

The old index is made as an index was before chapters existed: an ingest whose chapter
maker makes none (so its units name no chapter and the manifest counts units only).
The recording is the constructed 16-minute meeting of four known topics
(:mod:`tests.chapters.meeting_script`, transcript from subtitles, real local embedding).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from llama_index_video import schema
from llama_index_video.chapters.nodes import chapter_nodes, transcript_units
from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store import index_writer
from llama_index_video.store.collection import content_rows, nodes_with_vectors
from llama_index_video.store.folder import IndexFolder
from llama_index_video.store.recording_names import find_source
from tests.chapters.meeting_script import TOPIC_SECONDS, TOPICS, length, write_srt

TOLERANCE = 30.0


class Killed(BaseException):
    """A process killed at a write: nothing after it runs, nothing catches it."""


@pytest.fixture(scope="module")
def meeting(tmp_path_factory, make_wav) -> Path:
    folder = tmp_path_factory.mktemp("old_meeting")
    audio = make_wav(folder / "meeting.wav", np.zeros(int(length() * 16_000), np.float32))
    write_srt(folder / "meeting.srt")
    return audio


@pytest.fixture(scope="module")
def old_index(tmp_path_factory, meeting, embed_model) -> Path:
    """An index folder of the meeting made without chapters, as before they existed."""
    folder = tmp_path_factory.mktemp("old") / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("llama_index_video.chapters.nodes.add_chapters", lambda *a, **k: [])
        index = _index(folder, embed_model)
        try:
            assert index.ingest([meeting]).ok
            assert index.chapters(meeting) == []
        finally:
            index.close()
            IndexFolder(folder).release()
    return folder


@pytest.fixture(scope="module")
def made_at_ingest(meeting_copy, embed_model) -> list[tuple[float, float, str]]:
    """The chapters today's ingest makes of the same meeting: (start, end, title)."""
    audio, folder = meeting_copy
    index = _index(folder, embed_model)
    try:
        return [(c.start, c.end, c.title) for c in index.chapters(audio) or []]
    finally:
        index.close()


@pytest.fixture
def copy(old_index, tmp_path) -> Path:
    """A fresh copy of the old index folder (a new path: no Chroma of this process knows it)."""
    target = tmp_path / "index"
    shutil.copytree(old_index, target)
    return target


def test_verify_repair_gives_an_old_index_the_chapters_ingest_would_make(
    copy, meeting, embed_model, made_at_ingest
):
    index = _index(copy, embed_model)
    try:
        check, _ = index.verify()
        assert check.ok
        assert check.unchaptered == [_content(index, meeting)]
        _, report = index.verify(repair=True)
        assert report is not None and report.ok and report.files == []
        chapters = index.chapters(meeting) or []
        assert [(c.start, c.end, c.title) for c in chapters] == made_at_ingest
        assert len(chapters) == len(TOPICS)
        for number, chapter in enumerate(chapters):
            assert abs(chapter.start - number * TOPIC_SECONDS) <= TOLERANCE
        assert chapters[-1].end == pytest.approx(length(), abs=TOLERANCE)
        _units_point_at(index, meeting, chapters)
        hits = index.search("solar cells on the top charge the battery in daylight")
        assert hits and hits[0].chapter == chapters[1].title
        again, _ = index.verify()
        assert again.ok and again.unchaptered == []
        assert _counted(index, meeting)
        entry = next(e for e in index.library() if e.source == str(meeting))
        assert entry.moments.get("chapter") == len(TOPICS)
    finally:
        index.close()


REWRITE = index_writer.rewrite_rows


def _units_rewritten(share: float):
    """A ``rewrite_rows`` that dies rewriting the units, after ``share`` of them."""

    def rewrite(store, nodes, **kwargs):
        if nodes and nodes[0].metadata[schema.MODALITY] == "transcript":
            REWRITE(store, nodes[: int(len(nodes) * share)], **kwargs)
            raise Killed
        REWRITE(store, nodes, **kwargs)

    return rewrite


KILLS = {
    "chapter rows stored, units not rewritten": ("rewrite_rows", _units_rewritten(0.0)),
    "half the units rewritten": ("rewrite_rows", _units_rewritten(0.5)),
    "units rewritten, manifest not": ("manifest", None),
    "manifest counted, lexical matrices not built": ("settle_amends", None),
}


@pytest.mark.parametrize("kill", KILLS, ids=list(KILLS))
def test_a_repair_killed_while_making_chapters_is_finished_by_the_next(
    kill, copy, meeting, embed_model, made_at_ingest, monkeypatch
):
    where, how = KILLS[kill]
    index = _index(copy, embed_model)
    with monkeypatch.context() as patch:
        if where == "rewrite_rows":
            patch.setattr(index_writer, "rewrite_rows", how)
        elif where == "manifest":
            patch.setattr(index.manifest, "set_file", _die)
        else:
            patch.setattr(index_writer.IndexWriter, "settle_amends", _die)
        with pytest.raises(Killed):
            index.verify(repair=True)
    index.close()
    reader = _index(copy, embed_model)  # what a reader, then the next repair, finds
    try:
        reader.check_store()  # never fewer rows than the manifest counts
        assert reader.search("rechargeable batteries and a charging dock")
        _, report = reader.verify(repair=True)
        assert report is not None and report.ok
        check, _ = reader.verify()
        assert check.ok and check.unchaptered == []
        chapters = reader.chapters(meeting) or []
        assert [(c.start, c.end, c.title) for c in chapters] == made_at_ingest
        _units_point_at(reader, meeting, chapters)
        assert _counted(reader, meeting)
    finally:
        reader.close()


def test_a_chapter_left_from_other_units_is_deleted_by_the_repair(
    copy, meeting, embed_model, made_at_ingest
):
    index = _index(copy, embed_model)
    try:
        key = _content(index, meeting)
        units = transcript_units(nodes_with_vectors(index.vector_store, list(_rows(index, key))))
        left = chapter_nodes(units[:30])  # as if an older segmenter had run
        index.vector_store.add(left)  # stored, never counted: what a killed run leaves
        assert index.verify()[0].unchaptered == [key]
        index.verify(repair=True)
        chapters = index.chapters(meeting) or []
        assert [(c.start, c.end, c.title) for c in chapters] == made_at_ingest
        gone = {c.node_id for c in left} - {c.node_id for c in chapters}
        assert gone and not gone & set(_rows(index, key))
        assert _counted(index, meeting)
        assert index.verify()[0].ok
    finally:
        index.close()


def test_the_command_line_says_what_it_found_and_made(copy, meeting, capsys):
    assert main(["verify", "--index", str(copy)]) == 0
    assert "long recordings without chapters: 1; --repair makes them" in capsys.readouterr().out
    assert main(["verify", "--repair", "--index", str(copy)]) == 0
    assert "long recordings without chapters: 1 (made" in capsys.readouterr().out
    assert main(["chapters", str(meeting), "--index", str(copy), "--format", "youtube"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(TOPICS)


def _die(*args, **kwargs):
    raise Killed


def _index(folder: Path, embed_model) -> VideoIndex:
    return VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "media", frames=None),
        snapshot_reads=False,  # its stores are changed by hand, as a killed writer leaves them
    )


def _content(index: VideoIndex, source: Path) -> str:
    return find_source(index.manifest, str(source))[0].content_hash


def _rows(index: VideoIndex, key: str) -> dict:
    return content_rows(index.vector_store, key) or {}


def _counted(index: VideoIndex, source: Path) -> bool:
    """The manifest counts exactly the rows the store holds for the recording."""
    key = _content(index, source)
    record = index.manifest.file(key)
    return record is not None and record.node_count == len(_rows(index, key))


def _units_point_at(index: VideoIndex, source: Path, chapters) -> None:
    """Every unit names the chapter whose span holds its middle, and that chapter's title."""
    by_id = {c.node_id: c for c in chapters}
    rows = _rows(index, _content(index, source)).values()
    units = [m for m in rows if m[schema.MODALITY] == "transcript"]
    assert units
    for unit in units:
        chapter = by_id[unit[schema.CHAPTER]]
        assert chapter.start <= (unit[schema.START_S] + unit[schema.END_S]) / 2 <= chapter.end
        assert unit[schema.TITLE] == chapter.title
