"""The long-recording benchmark's timeline: offsets, subtitles, moved questions."""

from __future__ import annotations

import srt as srt_parser

from benchmarks.long_recording import NAME, Sentence, moved, offsets, parts, srt
from benchmarks.scoring import Question


def test_parts_follow_one_another_a_gap_apart():
    assert offsets([80.0, 60.0, 40.0], gap=1.0) == [0.0, 81.0, 142.0]
    assert offsets([]) == []


def test_the_subtitles_read_back_as_written():
    sentences = [Sentence(0.5, 4.341, "Welcome."), Sentence(3661.25, 3662.0, "An hour on.")]
    cues = list(srt_parser.parse(srt(sentences)))
    assert [c.content for c in cues] == ["Welcome.", "An hour on."]
    assert cues[1].start.total_seconds() == 3661.25 and cues[0].end.total_seconds() == 4.341


def test_questions_move_with_their_part_and_those_it_lacks_are_left_out():
    starts = {"team_sync.mp3": 142.0}
    spoken = Question("q", "spoken", "Who?", file="team_sync.mp3", start=10.0, end=12.5)
    assert moved(spoken, starts) == Question(
        "q", "spoken", "Who?", file=NAME, start=152.0, end=154.5
    )
    near = Question("n", "none", "How thick?")
    assert moved(near, starts) is near
    assert moved(Question("s", "onscreen", "Slide?", "team_sync.mp3", 1.0, 2.0), starts) is None
    assert moved(Question("h", "paraphrase", "Deploys?", "handbook.md", None, None), starts) is None


def test_every_part_has_its_script():
    found = parts()
    assert len(found) == 5 and all(part.media.exists() and part.sentences for part in found)
    for part in found:
        starts = [s.start for s in part.sentences]
        assert starts == sorted(starts)
