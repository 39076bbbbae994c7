"""The whole-process ingest benchmark: its figures and one tiny round of the real thing."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks.baseline import ProcessRun
from benchmarks.ingest_vs_naive import NAIVE, main, summarise
from tests_support import EXAMPLES, LIBRIVOX, ROOT

SHORT = ROOT / "tests" / "fixtures" / "speech" / "subtitled.mp4"


def _run(wall: float, cpu: float = 1.0, rss: float = 100.0) -> ProcessRun:
    return ProcessRun(wall, cpu, rss, 0, "", "")


def test_figures_are_medians_and_the_ratio_is_taken_round_by_round():
    runs = {
        "ours": [_run(10.0, 18.0, 900.0), _run(30.0, 20.0, 950.0), _run(12.0, 19.0, 920.0)],
        NAIVE: [_run(5.0, 9.0), _run(10.0, 10.0), _run(6.0, 11.0)],
    }
    figures = summarise(runs, media_seconds=180.0)
    ours = figures["ours"]
    assert ours.wall_s == 12.0
    assert ours.times_real_time == 15.0
    assert ours.cpu_s == 19.0
    assert ours.peak_rss_mb == 950.0
    assert ours.wall_vs_naive == 2.0  # ratios 2.0, 3.0, 2.0: a slow round on both cancels
    assert figures[NAIVE].wall_vs_naive == 1.0


def test_figures_need_the_naive_recipe_and_whole_rounds():
    with pytest.raises(ValueError, match="naive"):
        summarise({"ours": [_run(1.0)]}, media_seconds=1.0)
    with pytest.raises(ValueError, match="one run per round"):
        summarise({"ours": [_run(1.0)], NAIVE: [_run(1.0), _run(1.0)]}, media_seconds=1.0)


def test_rounds_are_bounded(capsys):
    with pytest.raises(SystemExit):
        main(["--rounds", "0"])
    assert "--rounds" in capsys.readouterr().err


def test_one_round_on_a_short_file_prints_both_recipes(tmp_path, capsys):
    figures = tmp_path / "figures.json"
    assert main(["--files", str(SHORT), "--rounds", "1", "--json", str(figures)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"round 1: ours [\d.]+ s \([\d.]+ CPU s\)", out), out
    assert out.splitlines()[-2].startswith("ours ")
    assert out.splitlines()[-1].startswith(f"{NAIVE} ")
    written = json.loads(figures.read_text())
    assert written["files"] == [SHORT.name]
    assert written["media_seconds"] == pytest.approx(6.0, abs=0.1)
    assert set(written["recipes"]) == {"ours", NAIVE}
    for recipe in written["recipes"].values():
        assert recipe["wall_s"] > 0
        assert recipe["cpu_s"] > 0
        assert recipe["peak_rss_mb"] > 50


def test_the_naive_recipe_reads_every_media_format_and_refuses_others():
    from benchmarks.evaluate import Naive

    naive = Naive([LIBRIVOX])
    hit = naive.index.as_retriever(similarity_top_k=1).retrieve("Mr John Dashwood")[0]
    assert hit.node.metadata["file"] == LIBRIVOX.name
    with pytest.raises(ValueError, match=r"timeline\.json"):
        Naive([EXAMPLES / "timeline.json"])
