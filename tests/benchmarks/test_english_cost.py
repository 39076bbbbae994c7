"""The English-cost benchmark (benchmarks/english_cost.py) on one example file."""

from __future__ import annotations

import pytest

from benchmarks.baseline import today
from benchmarks.english_cost import JOIN_GAP_S, ROOT, FileSet, main, measure
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
    from faster_whisper.audio import decode_audio

    from llama_index_video.transcription.base import SAMPLE_RATE

    short = ROOT / "tests" / "fixtures" / "speech" / "subtitled.mp4"
    seconds = len(decode_audio(str(short), sampling_rate=SAMPLE_RATE)) / SAMPLE_RATE
    joined = measure(today(), "en", FileSet([short, short], joined=True))
    assert joined["recordings"] == 1
    assert float(joined["audio_s"]) == pytest.approx(2 * (seconds + JOIN_GAP_S))
