"""Bad paths never stop an ingest: odd names, special files, unreadable folders, bad subtitles."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.file_walk import expand_paths
from tests_support import HANDBOOK


@pytest.fixture
def index(tmp_path, embed_model, transcriber):
    path = tmp_path / "index"
    opened = VideoIndex(
        path,
        embed_model=embed_model,
        reader=VideoReader(media_dir=path / "media", transcriber=transcriber),
    )
    yield opened
    opened.close()


def test_non_utf8_name_and_fifo_are_one_line_each_and_never_block(run, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(HANDBOOK, folder / "handbook.md")
    odd = os.fsencode(folder) + b"/caf\xe9.md"
    with open(odd, "wb") as handle:
        handle.write(HANDBOOK.read_bytes() + b"\nMore.\n")
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    result: list[tuple[int, str, str]] = []
    worker = threading.Thread(
        target=lambda: result.append(
            run("ingest", folder, os.fsdecode(odd), fifo, "--index", tmp_path / "idx", "--quiet")
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=240)
    assert not worker.is_alive(), "ingest blocked on the FIFO"
    code, out, err = result[0]
    assert code == 1 and "Traceback" not in err
    assert "\\xe9" in out and "file name is not valid UTF-8; rename it" in out
    assert f"failed   {fifo} (not a regular file (a named pipe))" in out
    assert "indexed  " in out and "handbook.md" in out


def _as_nobody(function):
    """Run ``function`` in a forked child with the ``nobody`` user's rights; its result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, run, report, exit without cleanup
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(function()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as reader:
        data = reader.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def test_unreadable_sub_folder_is_reported_not_skipped_silently():
    top = Path(tempfile.mkdtemp(prefix="unreadable-"))
    folder = top / "in"
    locked = folder / "private"
    locked.mkdir(parents=True)
    shutil.copy(HANDBOOK, folder / "handbook.md")
    shutil.copy(HANDBOOK, locked / "secret.md")
    for path in (top, folder):
        path.chmod(0o755)
    (folder / "handbook.md").chmod(0o644)
    locked.chmod(0)

    def expand():
        unreadable: list[tuple[Path, str]] = []
        files = [str(p) for p in expand_paths([folder], unreadable)]
        return files, [(str(p), why) for p, why in unreadable]

    try:
        files, unreadable = _as_nobody(expand) if os.geteuid() == 0 else expand()
    finally:
        locked.chmod(0o755)
        shutil.rmtree(top)
    assert files == [str(folder / "handbook.md")]
    assert [tuple(item) for item in unreadable] == [
        (str(locked), "folder cannot be read (Permission denied)")
    ]


def test_a_folder_walk_takes_other_encoders_files_and_passes_over_documents(tmp_path):
    names = ["call.WMA", "clip.wmv", "phone.3gp", "memo.amr", "song.aiff", "tv.ts", "deck.pdf"]
    for name in names:
        (tmp_path / name).write_bytes(b"\0")

    found = [p.name for p in expand_paths([tmp_path])]

    assert found == sorted(n for n in names if n != "deck.pdf")


def test_a_folder_ingest_names_the_files_it_passes_over(run, tmp_path):
    folder = tmp_path / "in"
    (folder / "notes").mkdir(parents=True)
    shutil.copy(HANDBOOK, folder / "handbook.md")
    (folder / "deck.pdf").write_bytes(b"%PDF-1.4\n")
    (folder / "notes" / "agenda.PDF").write_bytes(b"%PDF-1.4\n")
    (folder / "notes" / "sheet.xlsx").write_bytes(b"PK")
    (folder / ".DS_Store").write_bytes(b"\0")

    code, out, err = run("ingest", folder, "--index", tmp_path / "idx", "--quiet")

    assert code == 0 and "Traceback" not in err
    assert "1 indexed, 0 skipped, 0 failed" in out
    assert "passed over 3 files of other types (.pdf, .xlsx)" in out
    passed_over: list[Path] = []
    assert [p.name for p in expand_paths([folder], passed_over=passed_over)] == ["handbook.md"]
    assert sorted(p.name for p in passed_over) == ["agenda.PDF", "deck.pdf", "sheet.xlsx"]
