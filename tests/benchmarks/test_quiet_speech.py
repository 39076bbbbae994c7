"""The quiet-speech benchmark (benchmarks/quiet_speech.py) on one loud recording."""

from __future__ import annotations

import pytest

from benchmarks.quiet_speech import main


def test_the_quiet_sentence_is_kept_only_when_silences_are_heard_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--loud", "es_fleurs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("es_fleurs"))
    once, again = (float(value) for value in row.split()[1::2])
    assert once < 5.0 < 8.0 < again  # measured 3.69 -> 8.36 of 8.4 s
    beds = [line for line in lines if line.startswith(("music", "noise"))]
    assert len(beds) == 4
    for line in beds:  # nothing heard as speech in music or noise, either way
        assert [float(value) for value in line.split()[2::2]] == [0.0, 0.0], line
