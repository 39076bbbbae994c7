"""The English-cost benchmark (benchmarks/english_cost.py) on one example file."""

from __future__ import annotations

import pytest

from benchmarks.english_cost import ROOT, main
from tests_support import needs_base


@needs_base
def test_the_check_changes_no_english_transcript_and_its_cost_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["--rounds", "1", "--files", str(ROOT / "examples" / "media" / "team_sync.mp3")])
    rows = {
        line[:24].strip(): line[24:].split()
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("default", "told English"))
    }
    assert set(rows) == {"default", "told English"}
    for cpu, peak_mb, transcripts in rows.values():
        assert float(cpu) > 0 and float(peak_mb) > 0
        assert transcripts == "same"
