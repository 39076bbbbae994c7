"""The thread-and-waiting benchmark: one tiny round of the real thing, spinners stopped."""

from __future__ import annotations

import json

import pytest

from benchmarks.transcription_threads import LOADERS, WAITING, main
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio
from tests_support import LIBRIVOX

pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")


def test_busy_counts_and_rounds_are_bounded(capsys):
    for arguments in (["--rounds", "0"], ["--busy", "9"], ["--busy", "-1"]):
        with pytest.raises(SystemExit):
            main(arguments)
    assert "--busy" in capsys.readouterr().err


def test_every_case_gives_the_same_words_beside_a_busy_process(tmp_path, capsys, make_wav):
    # The reading's first sentence (0.2-6.8 s): four children each hear it beside a
    # spinning process, so the whole 25 s clip cost four times as much for the same check.
    first_sentence = make_wav(tmp_path / "dashwood.wav", decode_audio(LIBRIVOX)[: 7 * SAMPLE_RATE])
    figures = tmp_path / "figures.json"
    arguments = ["--files", str(first_sentence), "--busy", "1", "--rounds", "1"]
    arguments += ["--json", str(figures)]
    assert main(arguments) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "distinct transcripts across all runs: 1"
    written = json.loads(figures.read_text())
    [transcript] = written["transcripts"]
    assert "Dashwood" in transcript  # the words were heard, not just alike
    results = written["results"]
    assert {(r["loader"], r["waiting"]) for r in results} == {
        (loader, waiting) for loader in LOADERS for waiting in WAITING
    }
    assert all(r["busy"] == 1 and r["wall_s"] > 0 and r["cpu_s"] > 0 for r in results)
