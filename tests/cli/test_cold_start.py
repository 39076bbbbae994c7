"""Commands that only read the manifest start without LlamaIndex or Chroma (issue 38).

``clip`` names a recording and cuts it: both are the manifest's knowledge, so its
process never imports ``llama_index.core`` or ``chromadb`` (1.9 s + 1.0 s of a cold
start). With ``--subtitles`` it reads the transcript, which is in the vector store.
How long each command takes is ``benchmarks/cold_start.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("llama_index.core", "chromadb", "llama_index_video.index")


def run_cli(argv: list[str]) -> tuple[int, list[str], str]:
    """Run ``main(argv)`` in a new process: its exit status, which of ``HEAVY`` it
    imported, and what it printed."""
    code = (
        "import json, sys\n"
        "from llama_index_video.cli.main import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        f"print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]), "
        "file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    exit_code, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    return exit_code, loaded, done.stdout + done.stderr


def test_clip_cuts_from_the_manifest_alone(example_index, tmp_path):
    out = tmp_path / "moment.mp3"
    argv = ["clip", "team_sync.mp3", "--from", "5", "--to", "15", "-o", str(out)]
    code, loaded, said = run_cli([*argv, "--index", str(example_index.path)])
    assert code == 0, said
    assert "wrote" in said and "team_sync.mp3 00:05-00:15" in said and out.stat().st_size > 0
    assert loaded == []


def test_clip_refuses_an_unknown_source_in_one_line_without_loading_the_store(
    example_index, tmp_path
):
    argv = ["clip", "nowhere.mp4", "--from", "1", "--to", "2", "-o", str(tmp_path / "o.mp4")]
    code, loaded, said = run_cli([*argv, "--index", str(example_index.path)])
    assert code == 2 and "unknown source" in said and loaded == []


def test_clip_of_a_folder_with_no_index_says_so(tmp_path):
    argv = ["clip", "a.mp4", "--from", "1", "--to", "2", "-o", str(tmp_path / "o.mp4")]
    code, loaded, said = run_cli([*argv, "--index", str(tmp_path / "none")])
    assert code == 2 and "no index here" in said and loaded == []
    assert not Path(tmp_path / "none").exists()


def test_clip_with_subtitles_reads_the_transcript(example_index, tmp_path):
    out = tmp_path / "moment.mp4"
    argv = ["clip", "checkout_deep_dive.mp4", "--from", "00:45", "--to", "00:56", "--subtitles"]
    code, loaded, said = run_cli([*argv, "-o", str(out), "--index", str(example_index.path)])
    assert code == 0, said
    assert out.with_suffix(".srt").read_text().strip() and "llama_index.core" in loaded


def test_remove_help_loads_nothing_heavy():
    code, loaded, said = run_cli(["remove", "--help"])
    assert code == 0 and "--index" in said and loaded == []


def _listing(index_path: Path) -> tuple[list[dict], list[str]]:
    """``list --json`` in a new process: the entries, and which of ``HEAVY`` it loaded."""
    code, loaded, said = run_cli(["list", "--json", "--index", str(index_path)])
    assert code == 0, said
    entries, _ = json.JSONDecoder().raw_decode(said)  # stdout comes first
    return entries, loaded


def test_list_reads_the_manifest_alone_and_says_what_the_whole_index_says(example_index):
    listing, loaded = _listing(example_index.path)
    assert loaded == []
    full = sorted(example_index.library(), key=lambda e: e.source)
    assert [e["source"] for e in listing] == [e.source for e in full]
    for shown, counted in zip(listing, full, strict=True):
        assert shown["moments"] == counted.moments and sum(counted.moments.values()) > 0
        assert (shown["language"], shown["speakers"]) == (counted.language, counted.speakers)
        assert shown["duration"] == counted.duration


def test_an_index_from_before_summaries_is_listed_then_summarised(example_index, tmp_path):
    import shutil
    import sqlite3

    from llama_index_video.store.collection import release_chroma

    release_chroma(example_index.path / "chroma")
    old = tmp_path / "old"
    shutil.copytree(example_index.path, old)
    with sqlite3.connect(old / "manifest.sqlite") as db:
        db.execute("DROP TABLE summaries")
    first, loaded = _listing(old)
    assert "llama_index.core" in loaded  # counted from the rows, once
    again, loaded = _listing(old)
    assert loaded == [] and again == first
    assert any(entry["moments"].get("transcript") for entry in again)
