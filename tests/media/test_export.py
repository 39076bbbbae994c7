"""Cutting moments into files with PyAV: stream copy at keyframes, re-encoding elsewhere,
audio sources; and the ``clip`` command's one-line refusals."""

from __future__ import annotations

import time

import av
import pytest

from llama_index_video.cli.main import main
from llama_index_video.media.export import export_span, keyframe_before
from tests_support import CHECKOUT, TEAM_SYNC


def durations(path) -> dict[str, float]:
    with av.open(str(path)) as container:
        return {s.type: float(s.duration * s.time_base) for s in container.streams}


def test_a_ten_second_moment_at_a_keyframe_is_copied_within_a_second(tmp_path):
    started = time.perf_counter()
    report = export_span(CHECKOUT, 10.0, 20.0, tmp_path / "moment.mp4")
    took = time.perf_counter() - started
    assert report.method == "copy" and took < 1.0
    assert keyframe_before(CHECKOUT, 10.0) == report.start == 10.0
    got = durations(report.path)
    assert abs(got["video"] - 10.0) <= 5.0 + 1e-6  # one GOP of this file (5 s)
    assert abs(got["video"] - report.duration) < 0.1 and abs(got["audio"] - 10.0) < 0.2


def test_a_cut_between_keyframes_is_reencoded_to_the_span(tmp_path):
    report = export_span(CHECKOUT, 12.3, 22.3, tmp_path / "moment.mp4")
    assert report.method == "reencode" and report.start == 12.3
    got = durations(report.path)
    assert abs(got["video"] - 10.0) < 0.1 and abs(got["audio"] - 10.0) < 0.1


def test_a_copy_starts_at_the_keyframe_before(tmp_path):
    report = export_span(CHECKOUT, 12.3, 22.3, tmp_path / "moment.mp4", mode="copy")
    assert report.method == "copy" and report.start == 10.0  # the keyframe before 12.3 s
    assert abs(durations(report.path)["video"] - 12.3) <= 0.15  # two frames at 15 fps


def test_an_audio_source_exports_audio(tmp_path):
    report = export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / "moment.mp3")
    got = durations(report.path)
    assert set(got) == {"audio"} and abs(got["audio"] - 10.0) < 0.1


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nowhere.mp4", "--from", "1", "--to", "2"], "unknown source"),
        (["team_sync.mp3", "--from", "30", "--to", "50"], "after the end of the recording"),
        (["team_sync.mp3", "--from", "0", "--to", "30", "--max-seconds", "20"], "over the limit"),
    ],
)
def test_clip_refuses_bad_input_in_one_line(example_index, tmp_path, capsys, argv, says):
    out = tmp_path / "out.mp4"
    code = main(["clip", *argv, "-o", str(out), "--index", str(example_index.path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1 and not out.exists()


def test_clip_says_how_it_cut(example_index, tmp_path, capsys):
    out = tmp_path / "moment.mp4"
    argv = ["clip", "checkout_deep_dive.mp4", "--from", "00:12.3", "--to", "00:22.3"]
    assert main([*argv, "-o", str(out), "--index", str(example_index.path)]) == 0
    assert "re-encoded at the cut" in capsys.readouterr().out and out.stat().st_size > 0
