"""``ask --export``: cited moments joined in citation order, with their subtitles as a
track in the file (or burned in) and in a sidecar ``.srt``; ``clip --subtitles``."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from itertools import pairwise

import av
import pytest
import srt

from llama_index_video.cli.export_command import export_answer
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.results import Answer, Citation
from tests_support import CHECKOUT, OZONE, ROOT, TEAM_SYNC, subtitle_track


def seconds(path) -> dict[str, float]:
    with av.open(str(path)) as container:
        return {s.type: float(s.duration * s.time_base) for s in container.streams}


def track(path) -> list[srt.Subtitle]:
    """The file's subtitle track read back with PyAV, as SRT entries."""
    return [
        srt.Subtitle(i, timedelta(seconds=start), timedelta(seconds=end), text)
        for i, (start, end, text) in enumerate(subtitle_track(path), 1)
    ]


CITED = [
    Citation.at(str(CHECKOUT), 46.0, 55.7, modality="transcript", source_path=str(CHECKOUT)),
    Citation.at(str(OZONE), 23.5, 33.3, modality="transcript", source_path=str(OZONE)),
]


def test_cited_moments_are_joined_in_citation_order_with_a_subtitle_track(example_index, tmp_path):
    answer = Answer(question="q", text="a", citations=CITED)
    line = export_answer(example_index, answer, tmp_path / "answer.mp4")
    assert "2 moments" in line and "subtitles in a track of the file" in line
    got = seconds(tmp_path / "answer.mp4")
    assert abs(got["video"] - 19.5) < 0.1 and abs(got["audio"] - 19.5) < 0.1
    inside = track(tmp_path / "answer.mp4")
    sidecar = list(srt.parse((tmp_path / "answer.srt").read_text()))
    ms = [(s.start.total_seconds(), s.end.total_seconds(), s.content) for s in sidecar]
    assert [(round(a, 3), round(b, 3), t) for a, b, t in ms] == [
        (round(s.start.total_seconds(), 3), round(s.end.total_seconds(), 3), s.content)
        for s in inside
    ]
    # each moment's speech, unit by unit, the first under the citation's label
    labelled = [s for s in inside if s.content.startswith("[")]
    assert [s.content.split("\n")[0] for s in labelled] == [c.label for c in CITED]
    first, second = (
        (s for s in inside if s.start.total_seconds() < 9.7),
        (s for s in inside if s.start.total_seconds() >= 9.7),
    )
    assert "dedicated cluster" in " ".join(s.content for s in first)
    assert "ninety percent" in " ".join(s.content for s in second)
    assert labelled[1].start.total_seconds() == pytest.approx(9.7)
    assert all(a.end <= b.start for a, b in pairwise(inside))
    assert inside[-1].end.total_seconds() <= 19.5 + 1e-3


def test_an_audio_answer_exports_audio_with_its_subtitles_beside_it(example_index, tmp_path):
    cited = Citation.at(str(TEAM_SYNC), 13.0, 21.0, modality="transcript")
    out = tmp_path / "answer.m4a"
    line = export_answer(example_index, Answer(question="q", text="a", citations=[cited]), out)
    assert "no track in the file: audio only" in line
    assert set(seconds(out)) == {"audio"} and abs(seconds(out)["audio"] - 8.0) < 0.1
    (said,) = srt.parse(out.with_suffix(".srt").read_text())
    assert said.content.startswith(cited.label) and "Maria" in said.content
    assert said.start.total_seconds() == pytest.approx(1.0)  # spoken from 14 s


def test_an_answer_citing_no_moment_is_refused(example_index, tmp_path):
    answer = Answer(question="q", text="a", citations=[])
    with pytest.raises(MomentRequestError, match="cites no timed moment"):
        export_answer(example_index, answer, tmp_path / "answer.mp4")


def test_ask_export_from_the_command_line(example_index, tmp_path, capsys):
    out = tmp_path / "answer.mp4"
    argv = ["ask", "what did they decide about the cache", "--llm", "none", "--top-k", "2"]
    assert main([*argv, "--export", str(out), "--index", str(example_index.path)]) == 0
    assert "re-encoded at each cut" in capsys.readouterr().err
    assert seconds(out)["video"] > 1 and out.with_suffix(".srt").read_text().startswith("1\n")
    assert track(out)[0].content.startswith("[")


def test_ask_export_burns_the_subtitles_on_request(example_index, tmp_path, capsys):
    out = tmp_path / "answer.mp4"
    argv = ["ask", "what did they decide about the cache", "--llm", "none", "--top-k", "1"]
    argv += ["--export", str(out), "--burn-subtitles", "--index", str(example_index.path)]
    assert main(argv) == 0
    assert "subtitles burned into the frames" in capsys.readouterr().err
    with av.open(str(out)) as container:
        assert not container.streams.subtitles and container.streams.video
    assert out.with_suffix(".srt").is_file()


def test_burning_without_an_export_is_refused_in_one_line(example_index, capsys):
    argv = ["ask", "cache", "--llm", "none", "--burn-subtitles"]
    assert main([*argv, "--index", str(example_index.path)]) == 2
    err = capsys.readouterr().err
    assert "--burn-subtitles needs --export" in err and err.count("\n") == 1


def test_clip_with_what_was_said_as_subtitles(example_index, tmp_path, capsys):
    out = tmp_path / "moment.mp4"
    argv = ["clip", "checkout_deep_dive.mp4", "--from", "00:45", "--to", "00:56", "-o", str(out)]
    assert main([*argv, "--subtitles", "--index", str(example_index.path)]) == 0
    said = capsys.readouterr().out
    assert "by stream copy" in said and "subtitles in a track of the file" in said
    entries = track(out)
    assert entries[0].content.startswith("[checkout_deep_dive.mp4 00:45-00:56]")
    assert "dedicated cluster" in " ".join(s.content for s in entries)
    assert out.with_suffix(".srt").read_text().count("-->") == len(entries)


def test_clip_cannot_burn_subtitles_into_audio(example_index, tmp_path, capsys):
    out = tmp_path / "moment.mp3"
    argv = ["clip", "team_sync.mp3", "--from", "5", "--to", "15", "-o", str(out)]
    assert main([*argv, "--burn-subtitles", "--index", str(example_index.path)]) == 2
    err = capsys.readouterr().err
    assert "no video to burn subtitles into" in err and err.count("\n") == 1


@pytest.mark.parametrize("suffix", [".mp3", ".mp4"])
def test_moments_of_a_video_and_an_audio_recording_join_as_sound(example_index, tmp_path, suffix):
    cited = [CITED[0], Citation.at(str(TEAM_SYNC), 13.0, 21.0, modality="transcript")]
    out = tmp_path / f"answer{suffix}"
    line = export_answer(example_index, Answer(question="q", text="a", citations=cited), out)
    assert "2 moments" in line
    got = seconds(out)
    assert set(got) == {"audio"} and abs(got["audio"] - (9.7 + 8.0)) < 0.15


def test_one_moment_is_one_moment_and_an_audio_file_of_a_video_is_sound(example_index, tmp_path):
    out = tmp_path / "answer.m4a"
    line = export_answer(example_index, Answer(question="q", text="a", citations=CITED[:1]), out)
    assert "1 moment," in line
    assert set(seconds(out)) == {"audio"}


def test_the_export_line_is_not_glued_to_the_answer(example_index, tmp_path):
    out = tmp_path / "answer.mp4"
    argv = ["ask", "what did they decide about the cache", "--llm", "none", "--top-k", "2"]
    argv += ["--export", str(out), "--index", str(example_index.path)]
    done = subprocess.run(
        [sys.executable, "-m", "llama_index_video.cli.main", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order a terminal shows them
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    (wrote,) = [line for line in done.stdout.splitlines() if "wrote " in line]
    assert wrote.startswith(f"wrote {out}: ")
