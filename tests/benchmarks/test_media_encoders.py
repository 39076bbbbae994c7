"""The media-encoders benchmark's scoring, and that every file it writes is one the reader
reads (a case the reader refused by its suffix would measure nothing)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.media_encoders import BAD, CASES, SAID_AT, TOLERANCE_SECONDS, Outcome
from llama_index_video.reader.options import SUPPORTED_SUFFIXES


def test_a_first_hit_is_right_within_the_tolerance_on_the_files_own_timeline():
    late = 3.0
    assert Outcome("late.mp4", "", SAID_AT + late + TOLERANCE_SECONDS).right(late)
    assert not Outcome("late.mp4", "", SAID_AT).right(late + TOLERANCE_SECONDS + 0.1)
    assert not Outcome("silent.mkv", "", None).right(0.0)


def test_every_case_is_a_file_the_reader_reads_under_its_own_name():
    names = [case.name for case in CASES] + list(BAD)
    assert len(set(names)) == len(names)
    assert all(Path(name).suffix.lower() in SUPPORTED_SUFFIXES for name in names)
