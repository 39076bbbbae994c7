"""Speaker names, the timeline lookup, and units that never span two voices."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.reader.units import UnitOptions, build_units
from llama_index_video.speakers.base import (
    SpeakerTimeline,
    SpeakerTurn,
    cut_stretches,
    failures_named,
    merge_pieces,
    name_in_order,
    speaker_order,
    unknown_speakers,
)
from llama_index_video.transcription.base import Segment, Word


def test_speakers_are_named_by_first_appearance():
    turns = name_in_order([(5.0, 7.0, "b"), (0.0, 2.0, 7), (3.0, 4.0, "b"), (8.0, 8.0, 7)])
    assert [(t.start, t.speaker) for t in turns] == [
        (0.0, "SPEAKER_1"),
        (3.0, "SPEAKER_2"),
        (5.0, "SPEAKER_2"),
    ]  # the empty turn at 8.0 is dropped


def test_timeline_prefers_overlap_then_nearest_within_a_second():
    timeline = SpeakerTimeline(
        [SpeakerTurn(0.0, 4.0, "SPEAKER_1"), SpeakerTurn(5.0, 9.0, "SPEAKER_2")]
    )
    assert timeline.speaker_at(3.5, 5.2) == "SPEAKER_1"  # 0.5 s overlap against 0.2 s
    assert timeline.speaker_at(4.6, 4.8) == "SPEAKER_2"  # in the pause, nearer the second
    assert timeline.speaker_at(9.5, 9.8) == "SPEAKER_2"
    assert timeline.speaker_at(20.0, 21.0) is None
    assert SpeakerTimeline([]).speaker_at(0.0, 1.0) is None
    assert timeline.speakers == ["SPEAKER_1", "SPEAKER_2"]


def test_a_unit_ends_where_the_speaker_changes_even_mid_sentence():
    said = ["so", "we", "agree", "on", "that"]
    words = [Word(i * 0.5, i * 0.5 + 0.4, w) for i, w in enumerate(said)]
    segments = [Segment(0.0, 2.5, "so we agree on that", tuple(words))]
    turns = SpeakerTimeline([SpeakerTurn(0.0, 1.0, "A"), SpeakerTurn(1.0, 3.0, "B")])
    units = list(build_units(segments, speaker_at=turns.speaker_at))
    assert [(u.text, u.speaker) for u in units] == [("so we", "A"), ("agree on that", "B")]
    assert [u.speaker for u in build_units(segments)] == [None]


@settings(max_examples=60)
@given(
    st.lists(st.tuples(st.sampled_from("AB"), st.integers(1, 30)), min_size=1, max_size=40),
    st.integers(20, 80),
)
def test_no_unit_spans_two_speakers_and_no_word_is_lost(turn_plan, target_chars):
    words, turns, time = [], [], 0.0
    for number, (speaker, count) in enumerate(turn_plan):
        start = time
        for i in range(count):
            end = "." if i == count - 1 and number % 3 == 0 else ""
            words.append(Word(time, time + 0.3, f"w{len(words)}{end}"))
            time += 0.4
        turns.append(SpeakerTurn(start, time - 0.1, speaker))
    segments = [Segment(words[0].start, words[-1].end, "", tuple(words))]
    timeline = SpeakerTimeline(turns)
    options = UnitOptions(target_chars=target_chars, max_chars=max(target_chars, 60))
    units = list(build_units(segments, options, speaker_at=timeline.speaker_at))
    spoken = {w.text.rstrip("."): timeline.speaker_at(w.start, w.end) for w in words}
    for unit in units:
        assert {spoken[t.rstrip(".")] for t in unit.text.split()} == {unit.speaker}
    said = [t.rstrip(".") for u in units for t in u.text.split()]
    assert list(dict.fromkeys(said)) == [w.text.rstrip(".") for w in words]


@settings(max_examples=80)
@given(
    st.lists(st.tuples(st.floats(0.0, 2.0), st.floats(0.3, 6.0)), min_size=1, max_size=12),
    st.data(),
)
def test_each_word_gets_the_speaker_of_the_nearest_window(plan, data):
    """From window labels to turns to words: the path every backend's labels take."""
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer

    backend = CampplusDiarizer()
    stretches, centres, time = [], [], 0.0
    for gap, length in plan:
        start = time + gap + 0.01
        time = start + length
        windows = backend.windows(start, time)
        stretches.append((start, time, len(centres), len(centres) + len(windows)))
        centres.extend(w.centre for w in windows)
    labels = data.draw(st.lists(st.integers(0, 2), min_size=len(centres), max_size=len(centres)))
    turns = name_in_order(merge_pieces(cut_stretches(stretches, centres, labels)))
    for before, after in itertools.pairwise(turns):
        assert before.end <= after.start + 1e-9  # ordered, never overlapping
    timeline = SpeakerTimeline(turns)
    names: dict[int, str] = {}
    for start, end, first, last in stretches:
        for middle in np.linspace(start + 0.02, end - 0.02, 7):
            nearest = min(range(first, last), key=lambda i: abs(centres[i] - middle))
            if any(
                abs(abs(centres[i] - middle) - abs(centres[nearest] - middle)) < 0.02
                for i in range(first, last)
                if i != nearest
            ):
                continue  # half-way between two windows: either is right
            said = timeline.speaker_at(middle - 0.01, middle + 0.01)
            assert said is not None
            assert names.setdefault(labels[nearest], said) == said
    assert len(set(names.values())) == len(names)  # one name per cluster


def test_a_backend_failing_inside_is_one_diarization_error_naming_the_file():
    said = r"^talk\.mp4: CAM\+\+ failed \(RuntimeError: boom\)$"
    with pytest.raises(DiarizationError, match=said), failures_named("CAM++", Path("talk.mp4")):
        raise RuntimeError("boom")
    own = MissingDependencyError("torch", "speakers", "Speaker labels")
    with pytest.raises(MissingDependencyError) as passed, failures_named("CAM++", None):
        raise own
    assert passed.value is own


def test_labels_are_listed_by_number_then_names_alphabetically():
    """Ten voices were listed SPEAKER_1, SPEAKER_10, SPEAKER_2, ... (sorted as text)."""
    voices = ["SPEAKER_10", "Zoe Park", "SPEAKER_2", "ana", "SPEAKER_1"]
    assert sorted(voices, key=speaker_order) == [
        "SPEAKER_1", "SPEAKER_2", "SPEAKER_10", "ana", "Zoe Park",
    ]  # fmt: skip
    assert unknown_speakers(["SPEAKER_11"], voices) == (
        "no moment of this index was said by 'SPEAKER_11'; "
        "its speakers: SPEAKER_1, SPEAKER_2, SPEAKER_10, ana, Zoe Park"
    )
