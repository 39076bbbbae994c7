"""Exports never destroy what they read and never leave a truncated file under their name.

Refused in one line naming the output, before anything is opened for writing: the
output is the recording (by its path, a symlink or a hard link; copy, re-encode, audio,
a join), a folder, a device, in a missing or read-only folder, or of no known format.
A full disk (a real, tiny tmpfs) is an error naming the output, where FFmpeg's own
writer reported success over a truncated file. Every failure leaves no temporary file.
The sources are copies: on the old code these tests destroyed them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from llama_index_video.cli.main import main
from llama_index_video.errors import MediaError
from llama_index_video.media.export import export_span, join_spans
from llama_index_video.media.output import PARTIAL_MARK, write_text, written
from tests_support import CHECKOUT, TEAM_SYNC


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def recordings(tmp_path) -> dict[str, Path]:
    folder = tmp_path / "src"
    folder.mkdir()
    return {
        "video": Path(shutil.copy(CHECKOUT, folder)),
        "audio": Path(shutil.copy(TEAM_SYNC, folder)),
    }


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if PARTIAL_MARK in p.name)


def same_file_outputs(source: Path) -> dict[str, Path]:
    link = source.with_name("link" + source.suffix)
    link.symlink_to(source.name)
    hard = source.with_name("hard" + source.suffix)
    os.link(source, hard)
    dotted = source.parent / ".." / source.parent.name / source.name
    return {"path": source, "symlink": link, "hard link": hard, "dotted": dotted}


@pytest.mark.parametrize(
    ("kind", "mode", "start"),
    [("video", "auto", 10.0), ("video", "reencode", 12.3), ("audio", "auto", 5.0)],
)
def test_exporting_onto_the_recording_itself_is_refused_and_it_stays_whole(
    recordings, kind, mode, start
):
    source = recordings[kind]
    before = digest(source)
    for how, output in same_file_outputs(source).items():
        with pytest.raises(MediaError, match="is the recording being exported") as refused:
            export_span(source, start, start + 3.0, output, mode=mode)  # type: ignore[arg-type]
        assert str(refused.value).startswith(f"{output}: "), how
        assert "\n" not in str(refused.value) and digest(source) == before, how
    assert leftovers(source.parent) == []


def test_a_join_refuses_an_output_that_is_any_of_its_recordings(recordings, tmp_path):
    first, second = recordings["video"], tmp_path / "second.mp4"
    shutil.copy(CHECKOUT, second)
    before = digest(second)
    with pytest.raises(MediaError, match="is the recording being exported"):
        join_spans([(first, 1.0, 3.0), (second, 5.0, 7.0)], second)
    assert digest(second) == before and leftovers(tmp_path) == []


def test_an_export_replaces_an_older_file_and_follows_a_symlink(recordings, tmp_path):
    target = tmp_path / "out" / "moment.mp4"
    target.parent.mkdir()
    target.write_bytes(b"an older export")
    link = tmp_path / "latest.mp4"
    link.symlink_to(target)
    report = export_span(recordings["video"], 10.0, 13.0, link)
    assert report.path == link and link.is_symlink()
    assert target.stat().st_size > 10_000 and leftovers(target.parent) == []


@pytest.mark.parametrize("bits", [0o600, 0o640, 0o664, 0o444])
def test_a_replaced_export_keeps_its_permission_bits_through_a_symlink(recordings, tmp_path, bits):
    target = tmp_path / "moment.mp4"
    target.write_bytes(b"an older export")
    target.chmod(bits)
    link = tmp_path / "latest.mp4"
    link.symlink_to(target.name)
    export_span(recordings["video"], 10.0, 13.0, link)
    assert target.stat().st_size > 10_000
    assert oct(target.stat().st_mode & 0o7777) == oct(bits)  # the old code: 0o644 (umask)


def test_a_new_export_and_a_replaced_text_file_get_the_usual_and_the_kept_bits(tmp_path):
    fresh, kept = tmp_path / "new.srt", tmp_path / "kept.srt"
    kept.write_text("old")
    kept.chmod(0o600)
    write_text(fresh, "1", sources=[])
    write_text(kept, "2", sources=[])
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.read_text() == "2"


@pytest.fixture
def read_only_folder(tmpfs):
    return tmpfs("ro", "ro,size=1m")


@pytest.fixture
def tiny_disk(tmpfs):
    return tmpfs("tiny", "size=200k")


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("moment.xyz", "no format is known by the suffix '.xyz'"),
        (".", "is a folder"),
        ("/dev/full", "is not a regular file"),
        ("missing/moment.mp4", "does not exist"),
        ("moment", "no format is known without a suffix"),
    ],
)
def test_output_errors_name_the_output_not_the_recording(recordings, tmp_path, output, says):
    target = Path(output) if output.startswith("/") else tmp_path / output
    with pytest.raises(MediaError, match=says) as refused:
        export_span(recordings["video"], 10.0, 13.0, target)
    assert refused.value.path == target and "checkout" not in str(refused.value)
    assert leftovers(tmp_path) == []


def test_a_read_only_folder_is_named_as_the_output(recordings, read_only_folder):
    target = read_only_folder / "moment.mp4"
    with pytest.raises(MediaError, match="cannot be written") as refused:
        export_span(recordings["video"], 10.0, 13.0, target, mode="reencode")
    assert refused.value.path == target and "checkout" not in str(refused.value)


@pytest.mark.parametrize("mode", ["copy", "reencode"])
def test_a_full_disk_is_an_error_naming_the_output_and_leaves_nothing(recordings, tiny_disk, mode):
    target = tiny_disk / "moment.mp4"
    with pytest.raises(MediaError, match="no space left") as refused:
        export_span(recordings["video"], 0.0, 40.0, target, mode=mode)  # type: ignore[arg-type]
    assert refused.value.path == target
    assert list(tiny_disk.iterdir()) == []  # neither a truncated file nor its partial


def test_a_failure_inside_the_block_keeps_the_old_file(tmp_path):
    target = tmp_path / "notes.srt"
    target.write_text("kept")
    with pytest.raises(RuntimeError), written(target, sources=[]) as handle:
        handle.write(b"half of it")
        raise RuntimeError("stopped")
    assert target.read_text() == "kept" and leftovers(tmp_path) == []


def _ingest(source: Path, index_dir: Path, transcriber, embed_model) -> None:
    """Index ``source`` into ``index_dir`` with the scripted transcriber."""
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    index = VideoIndex(
        index_dir,
        embed_model=embed_model,
        reader=VideoReader(media_dir=index_dir / "media", transcriber=transcriber),
    )
    assert index.ingest([source]).ok
    index.close()


def test_clip_or_transcript_onto_its_own_recording_is_refused_in_one_line(
    tmp_path, script_transcriber, embed_model, capsys
):
    source = tmp_path / "src" / TEAM_SYNC.name
    source.parent.mkdir()
    shutil.copy(TEAM_SYNC, source)
    before = digest(source)
    _ingest(source, tmp_path / "idx", script_transcriber, embed_model)
    link = tmp_path / "link.mp3"
    link.symlink_to(source)
    for output in (source, link):
        argv = ["clip", TEAM_SYNC.name, "--from", "1", "--to", "4", "-o", str(output)]
        assert main([*argv, "--reencode", "--index", str(tmp_path / "idx")]) == 2
        err = capsys.readouterr().err
        assert "is the recording being exported" in err and err.count("\n") == 1
        assert err.startswith(f"error: {output}: ")
    argv = ["transcript", TEAM_SYNC.name, "-o", str(source), "--index", str(tmp_path / "idx")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is the recording being exported" in err and err.count("\n") == 1
    assert digest(source) == before


def test_the_next_export_deletes_what_a_killed_export_left_and_nothing_else(tmp_path):
    """A ``kill -9`` leaves the hidden temporary file: the next export to that folder
    deletes it once it is over a minute old; a running export's file (fresh) and files
    of any other name stay."""
    old = time.time() - 120
    stale = [
        tmp_path / f".talk.1f2e3d4c{PARTIAL_MARK}.mp4",
        tmp_path / f".notes.0a0b0c0d{PARTIAL_MARK}",
    ]
    kept = [
        tmp_path / f".talk.99aa88bb{PARTIAL_MARK}.mp4",  # fresh: an export still writing
        tmp_path / f"talk.1f2e3d4c{PARTIAL_MARK}.mp4",  # not hidden: a user's file
        tmp_path / f".talk.1f2e{PARTIAL_MARK}.mp4",  # not 8 hex digits
        tmp_path / "talk.mp4",
    ]
    for path in [*stale, *kept]:
        path.write_bytes(b"x")
    for path in [*stale, *kept[1:]]:
        os.utime(path, (old, old))
    with written(tmp_path / "moment.srt", sources=[]) as handle:
        handle.write(b"1\n")
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert (tmp_path / "moment.srt").read_bytes() == b"1\n"


def test_clip_subtitles_never_overwrite_the_subtitle_file_ingest_read(
    tmp_path, script_transcriber, embed_model, capsys
):
    """``clip --subtitles -o src/NAME.m4a`` would write ``src/NAME.srt``: the sidecar
    ingest read for ``src/NAME.mp3``. Refused in one line before anything is written."""
    source = tmp_path / "src" / TEAM_SYNC.name
    source.parent.mkdir()
    shutil.copy(TEAM_SYNC, source)
    sidecar = source.with_suffix(".srt")
    sidecar.write_text("1\n00:00:00,000 --> 00:00:05,000\nThe weekly sync starts now.\n")
    before = digest(sidecar)
    _ingest(source, tmp_path / "idx", script_transcriber, embed_model)
    output = source.with_suffix(".m4a")
    argv = ["clip", TEAM_SYNC.name, "--from", "1", "--to", "4", "--subtitles", "-o", str(output)]
    assert main([*argv, "--index", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {sidecar}: is the subtitle file of the indexed {source}")
    assert err.count("\n") == 1
    assert digest(sidecar) == before and not output.exists()
    elsewhere = tmp_path / "out" / "moment.m4a"
    elsewhere.parent.mkdir()
    argv[-1] = str(elsewhere)
    assert main([*argv, "--index", str(tmp_path / "idx")]) == 0, capsys.readouterr().err
    assert elsewhere.with_suffix(".srt").is_file() and digest(sidecar) == before
