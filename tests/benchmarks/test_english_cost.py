"""The English-cost benchmark (benchmarks/english_cost.py) on one example file."""

from __future__ import annotations

import pytest

from benchmarks.baseline import today
from benchmarks.english_cost import JOIN_GAP_S, ROOT, main, measure
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


@needs_base
def test_a_joined_set_is_transcribed_as_one_recording_with_gaps() -> None:
    sync = ROOT / "examples" / "media" / "team_sync.mp3"
    apart = measure(today(), "en", [sync, sync])
    joined = measure(today(), "en", [sync, sync], joined=True)
    assert float(joined["audio_s"]) == pytest.approx(float(apart["audio_s"]) + 2 * JOIN_GAP_S)
    assert (joined["recordings"], apart["recordings"]) == (1, 2)
