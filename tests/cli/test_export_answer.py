"""``ask --export``: cited moments joined in citation order, with their subtitles."""

from __future__ import annotations

import av
import pytest
import srt

from llama_index_video.cli.export_command import export_answer
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.results import Answer, Citation
from tests_support import CHECKOUT, OZONE


def seconds(path) -> dict[str, float]:
    with av.open(str(path)) as container:
        return {s.type: float(s.duration * s.time_base) for s in container.streams}


def test_cited_moments_are_joined_in_citation_order(example_index, tmp_path):
    cited = [
        Citation.at(str(CHECKOUT), 46.0, 55.7, modality="transcript", source_path=str(CHECKOUT)),
        Citation.at(str(OZONE), 23.5, 33.3, modality="transcript", source_path=str(OZONE)),
    ]
    answer = Answer(question="q", text="a", citations=cited)
    line = export_answer(example_index, answer, tmp_path / "answer.mp4")
    assert "2 moments" in line
    got = seconds(tmp_path / "answer.mp4")
    assert abs(got["video"] - 19.5) < 0.1 and abs(got["audio"] - 19.5) < 0.1
    subtitles = list(srt.parse((tmp_path / "answer.srt").read_text()))
    assert [s.content.split("]")[0] + "]" for s in subtitles] == [c.label for c in cited]
    assert "dedicated cluster" in subtitles[0].content and "ninety percent" in subtitles[1].content
    assert subtitles[1].start.total_seconds() == pytest.approx(9.7)


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
