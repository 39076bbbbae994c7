"""The command line: exit codes, one-line errors, and the search --json contract."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.cli.main import main
from tests_support import EXAMPLES, OZONE, OZONE_SRT

HIT_KEYS = {
    "source",
    "modality",
    "start",
    "end",
    "score",
    "text",
    "label",
    "url",
    "frame_path",
    "frame_time",
    "context",
    "speaker",
    "site_url",
    "source_path",
    "confidence",
    "chapter",
}


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, example_index):
    """A copy of the examples' index (script transcripts), for the commands to open."""
    folder = tmp_path_factory.mktemp("cli") / "index"
    shutil.copytree(example_index.path, folder)
    return folder


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_console_script_help_lists_every_command():
    result = subprocess.run(
        [Path(sys.executable).with_name("llama-index-video"), "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    for command in ("ingest", "search", "ask"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["ingest", "search", "ask"])
def test_each_command_has_help(capsys, command):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "--index" in capsys.readouterr().out


def test_ingest_again_skips_everything(capsys, index_dir):
    code, out, _ = run(capsys, "ingest", str(EXAMPLES), "--index", str(index_dir), "--quiet")
    assert code == 0
    assert out.strip().splitlines()[-1].startswith("0 indexed, 4 skipped, 0 failed")


def test_failed_file_sets_exit_code_and_keeps_the_others(capsys, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "broken.mp4").write_bytes(b"\x00\x01garbage" * 64)
    shutil.copy(EXAMPLES / "handbook.md", folder)
    code, out, err = run(capsys, "ingest", str(folder), "--index", str(tmp_path / "i"), "--quiet")
    assert code == 1
    assert "failed   " in out and "broken.mp4" in out and "not a readable audio or video" in out
    assert "indexed  " in out and "handbook.md" in out
    assert "Traceback" not in out + err


def test_one_moment_is_said_so(capsys, tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Release\n\nVersion 2.4 ships on Friday.\n", encoding="utf-8")
    code, out, _ = run(capsys, "ingest", str(note), "--index", str(tmp_path / "i"), "--quiet")
    assert code == 0 and out.splitlines()[0] == f"indexed  {note}, 1 moment"


def test_a_silent_recording_is_indexed_with_no_moments_and_its_note(capsys, tmp_path, make_wav):
    silent = make_wav(tmp_path / "silent.wav", np.zeros(16_000 * 4, np.float32))
    index = str(tmp_path / "i")
    code, out, _ = run(capsys, "ingest", str(silent), "--index", index, "--quiet")
    assert code == 0
    assert out.splitlines()[0] == f"indexed  {silent}, 0 moments (no speech heard)"
    code, out, _ = run(capsys, "list", "--index", index)
    assert code == 0 and out.startswith(f"indexed  {silent}") and "no speech heard" in out
    code, out, _ = run(capsys, "verify", "--index", index)
    assert code == 0 and out.splitlines()[-1].startswith("ok: 1 files")
    assert out.splitlines()[0].endswith(f"0 stored  {silent} (no speech heard)")
    code, out, _ = run(capsys, "ingest", str(silent), "--index", index, "--quiet")
    assert code == 0 and out.splitlines()[0] == f"skipped  {silent} (unchanged)"


def test_ingest_names_the_subtitle_file_it_read(capsys, tmp_path):
    video = tmp_path / OZONE.name
    shutil.copy(OZONE, video)
    shutil.copy(OZONE_SRT, tmp_path)
    argv = ["ingest", str(video), "--index", str(tmp_path / "i"), "--no-frames", "--ocr", "off"]
    code, out, _ = run(capsys, *argv, "--quiet")
    assert code == 0
    [line] = [line for line in out.splitlines() if line.startswith("indexed  ")]
    assert line.startswith(f"indexed  {video}, ")
    assert line.endswith(f" moments (transcript from subtitles ({OZONE_SRT.name}))")


def test_search_json_follows_the_contract(capsys, index_dir):
    code, out, _ = run(
        capsys,
        "search",
        "How much ultraviolet C radiation is absorbed?",
        "--index",
        str(index_dir),
        "--json",
    )
    assert code == 0
    hits = json.loads(out)
    assert hits and all(set(h) == HIT_KEYS for h in hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    best = hits[0]
    assert best["source"] == str(OZONE)
    assert best["modality"] in {"transcript", "frame", "ocr"}
    assert best["start"] <= 33.3 and best["end"] >= 29.5
    assert 0.5 < best["confidence"] <= 1.0
    assert best["url"] == f"{best['source']}#t={best['start']:.1f}"
    assert all({"start", "end", "text"} <= set(c) for c in best["context"])
    assert best["frame_path"] and best["frame_path"].endswith(".jpg")


def test_text_document_hits_have_null_times(capsys, index_dir):
    code, out, _ = run(
        capsys,
        "search",
        "Which days are deploys on?",
        "--index",
        str(index_dir),
        "--json",
        "--modality",
        "text",
    )
    hits = json.loads(out)
    assert code == 0 and hits and {h["modality"] for h in hits} == {"text"}
    assert hits[0]["start"] is None and hits[0]["end"] is None and hits[0]["url"] is None
    assert "Tuesdays" in hits[0]["text"]


def test_unrelated_question_returns_an_empty_array(capsys, index_dir):
    code, out, _ = run(
        capsys, "search", "recipe for sourdough bread", "--index", str(index_dir), "--json"
    )
    assert code == 0 and json.loads(out) == []


def test_ask_without_a_key_gives_an_extractive_cited_answer(capsys, index_dir):
    code, out, _ = run(
        capsys,
        "ask",
        "Who will own the migration to the new billing provider?",
        "--index",
        str(index_dir),
        "--json",
    )
    answer = json.loads(out)
    assert code == 0 and answer["found"] is True
    assert "[team_sync.mp3 00:1" in answer["answer"]
    first = answer["citations"][0]
    assert first["source"].endswith("team_sync.mp3") and first["url"].startswith(
        first["source"] + "#t="
    )
    assert set(answer["hits"][0]) == HIT_KEYS


def test_ask_with_nothing_relevant_says_so(capsys, index_dir):
    code, out, _ = run(
        capsys, "ask", "What is the stock price of Apple?", "--index", str(index_dir)
    )
    assert code == 0 and out.startswith("Not found in the index")


def test_missing_index_is_one_line_error(capsys, tmp_path):
    code, out, err = run(capsys, "search", "anything", "--index", str(tmp_path / "nowhere"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no index here" in err


@pytest.mark.parametrize(
    "argv", [["search", "q", "--top-k", "0"], ["search", "q", "--modality", "smell"]]
)
def test_bad_arguments_are_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def _quiet_ingest(path: Path, index: Path) -> subprocess.CompletedProcess[str]:
    """``llama-index-video ingest PATH --index INDEX --quiet`` as a user runs it (its
    logging set up by the console script, which an in-process ``main`` skips)."""
    return subprocess.run(
        [
            Path(sys.executable).with_name("llama-index-video"),
            "ingest",
            str(path),
            "--index",
            str(index),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_failed_file_is_told_once(tmp_path):
    # the report line; the same outcome was also logged as a warning line before
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x01garbage" * 64)
    result = _quiet_ingest(broken, tmp_path / "index")
    assert result.returncode == 1
    assert (result.stdout + result.stderr).count("broken.mp4") == 1
    assert "failed   " in result.stdout


def test_a_library_logging_at_debug_prints_nothing_without_debug(tmp_path):
    # bm25s sets its own logger to DEBUG and logs while the lexical index is built.
    result = _quiet_ingest(EXAMPLES / "handbook.md", tmp_path / "index")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


MIGRATION = "Who will own the migration to the new billing provider?"  # team_sync 00:14


def test_search_keeps_the_moments_of_the_recordings_named_by_source(capsys, index_dir):
    def searched(*sources: str) -> list[dict]:
        named = [arg for source in sources for arg in ("--source", source)]
        asked = ["search", MIGRATION, "--index", str(index_dir), "--json", *named]
        code, out, err = run(capsys, *asked)
        assert code == 0, err
        return json.loads(out)

    assert Path(searched()[0]["source"]).name == "team_sync.mp3"
    elsewhere = searched("checkout_deep_dive.mp4")
    assert {Path(hit["source"]).name for hit in elsewhere} <= {"checkout_deep_dive.mp4"}
    both = searched("checkout_deep_dive.mp4", "team_sync.mp3")
    assert Path(both[0]["source"]).name == "team_sync.mp3"
    assert both[0]["start"] <= 14.5 <= both[0]["end"]
    assert {Path(hit["source"]).name for hit in both} <= {"checkout_deep_dive.mp4", "team_sync.mp3"}

    code, _, err = run(
        capsys, "search", MIGRATION, "--index", str(index_dir), "--source", "nowhere.mp4"
    )
    assert code != 0 and "nowhere.mp4" in err and len(err.strip().splitlines()) == 1, err


def test_odd_entries_in_a_folder_each_get_one_line(capsys, tmp_path):
    """A symlink loop was left out without a word; a newline in a name split its line."""
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "loop.mp4").symlink_to("loop.mp4")
    (folder / "Notiz Ä\nzwei.mp3").write_text("# Meeting notes\nNothing to see here.\n" * 40)
    (folder / "export.mov").mkdir()
    shutil.copy(EXAMPLES / "handbook.md", folder)
    code, out, err = run(capsys, "ingest", str(folder), "--index", str(tmp_path / "i"), "--quiet")
    assert code == 1 and "Traceback" not in out + err
    lines = out.strip().splitlines()
    assert f"failed   {folder / 'loop.mp4'} (cannot be read (" in out
    assert f"failed   {folder}/Notiz Ä\\nzwei.mp3 (not a readable audio or video file: it" in out
    assert any(line.startswith("indexed  ") and "handbook.md" in line for line in lines)
    assert lines[-1].startswith("1 indexed, 0 skipped, 2 failed")
