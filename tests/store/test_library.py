"""The library: list what the index holds, remove a source, prune files that are gone."""

from __future__ import annotations

import json
import shutil

import pytest

from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.reader.video_reader import VideoReader
from tests_support import ROOT

TALK = ROOT / "tests" / "fixtures" / "speech" / "subtitled.mkv"


@pytest.fixture
def indexed(tmp_path, embed_model, make_video):
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(TALK, media / "talk.mkv")
    make_video(media / "slides.mp4", [(2.0, (200, 0, 0)), (2.0, (0, 0, 200))], tone=False)
    (media / "broken.mp4").write_bytes(b"not a video at all")
    path = tmp_path / "index"
    reader = VideoReader(
        media_dir=path / "media", frames=FrameSamplingOptions(interval=1.0), ocr="off"
    )
    index = VideoIndex(path, embed_model=embed_model, reader=reader)
    index.ingest([media])
    yield index, media
    index.close()


def _by_name(entries):
    return {e.source.rsplit("/", 1)[-1]: e for e in entries}


def test_list_shows_each_source_with_its_moments_and_failures(indexed):
    index, _ = indexed
    entries = _by_name(index.library())
    talk, slides = entries["talk.mkv"], entries["slides.mp4"]
    assert talk.status == "indexed" and talk.moments == {"transcript": 1}
    assert talk.language == "de" and talk.duration == pytest.approx(6.0, abs=0.2)
    assert slides.moments.get("frame", 0) >= 2 and slides.indexed_at
    failed = [e for e in index.library() if e.status == "failed"]
    assert len(failed) == 1 and failed[0].reason


def test_remove_takes_out_rows_frames_and_entry_and_nothing_else(indexed):
    index, media = indexed
    frames = index.path / "media" / "frames"
    before = len(list(frames.iterdir()))
    assert before >= 2
    assert index.remove(media / "slides.mp4") == 1
    assert not list(frames.iterdir())
    assert "slides.mp4" not in _by_name(index.library())
    assert (media / "slides.mp4").is_file()  # the file itself stays
    assert index.search("Hallo Welt")  # the other source is still searchable
    assert index.remove(media / "nothing.mp4") == 0


def test_prune_drops_sources_whose_files_are_gone(indexed):
    index, media = indexed
    (media / "talk.mkv").unlink()
    assert _by_name(index.library())["talk.mkv"].status == "missing"
    assert [name.rsplit("/", 1)[-1] for name in index.prune()] == ["talk.mkv"]
    assert "talk.mkv" not in _by_name(index.library())
    assert not index.search("Hallo Welt")


def test_cli_list_and_remove(indexed, capsys):
    index, media = indexed
    index.close()
    folder = str(index.path)
    assert main(["list", "--index", folder, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["status"] for e in listed} == {"indexed", "failed"}
    assert main(["remove", str(media / "talk.mkv"), "--index", folder]) == 0
    assert "removed" in capsys.readouterr().out
    assert main(["remove", str(media / "talk.mkv"), "--index", folder]) == 1
    assert main(["list", "--index", folder]) == 0
    out = capsys.readouterr().out
    assert "slides.mp4" in out and "talk.mkv" not in out


def test_library_and_transcript_routes_follow_the_media_access_rules(indexed):
    from fastapi.testclient import TestClient

    from llama_index_video.service.app import create_app

    index, media = indexed
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        entries = client.get("/api/library").json()
        talk = next(e for e in entries if e["source"].endswith("talk.mkv"))
        assert talk["moments"] == {"transcript": 1} and talk["media_url"]
        lines = client.get("/api/transcript", params={"source": talk["source"]}).json()
        assert lines and lines[0]["text"].startswith("Hallo") and lines[0]["start"] < 1.0
        missing = client.get("/api/transcript", params={"source": str(media / "x.mkv")})
        assert missing.status_code == 404
    with TestClient(
        create_app(index, token="library-test-token-0123"), base_url="http://10.1.2.3:8000"
    ) as guarded:
        assert guarded.get("/api/library").status_code == 401
        assert guarded.get("/api/transcript", params={"source": "x"}).status_code == 401


def test_remove_and_prune_take_the_writer_lock(indexed):
    from llama_index_video.errors import IndexBusyError
    from llama_index_video.store.lock import WriterLock

    index, media = indexed
    with WriterLock(index.path) as lock:
        lock.acquire(wait=0)
        with pytest.raises(IndexBusyError):
            index.remove(media / "slides.mp4", wait=0)
        with pytest.raises(IndexBusyError):
            index.prune(wait=0)
    assert index.remove(media / "slides.mp4", wait=0) == 1


def test_remove_refuses_a_name_that_two_ingested_files_share(
    tmp_path, embed_model, monkeypatch, capsys
):
    """The same relative path ingested from two folders: `remove` by it from a third
    folder removed both (and said "removed" once); now it lists them and asks for a path."""
    for folder, text in (("a", "Alpha notes about the boiler."), ("b", "Beta notes on the roof.")):
        (tmp_path / folder / "src").mkdir(parents=True)
        (tmp_path / folder / "src" / "same.md").write_text(f"# Notes\n\n{text}\n")
    index_dir = str(tmp_path / "index")
    for folder in ("a", "b"):
        monkeypatch.chdir(tmp_path / folder)
        assert main(["ingest", "src/same.md", "--index", index_dir, "--quiet"]) == 0
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["remove", "src/same.md", "--index", index_dir]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names 2 recordings" in err and "give a path" in err
    assert str(tmp_path / "a" / "src" / "same.md") in err
    assert str(tmp_path / "b" / "src" / "same.md") in err
    index = VideoIndex(index_dir, embed_model=embed_model)
    assert len(index.library()) == 2  # nothing was removed
    assert index.remove(tmp_path / "a" / "src" / "same.md") == 1
    assert [e.path for e in index.library()] == [str(tmp_path / "b" / "src" / "same.md")]
    index.close()


def test_a_failed_file_is_listed_by_its_path(indexed, capsys):
    index, media = indexed
    failed = [e for e in index.library() if e.status == "failed"]
    assert [e.path for e in failed] == [str(media / "broken.mp4")]
    assert failed[0].source.endswith("broken.mp4") and "not a readable" in failed[0].reason
    index.close()
    assert main(["list", "--index", str(index.path), "--json"]) == 0
    listed = {e["status"]: e for e in json.loads(capsys.readouterr().out)}
    assert listed["failed"]["path"] == str(media / "broken.mp4")
    assert main(["list", "--index", str(index.path)]) == 0
    assert f"failed   {media / 'broken.mp4'}" in capsys.readouterr().out


def test_a_file_that_changed_and_failed_is_listed_by_its_path_beside_the_version_kept(
    indexed, capsys
):
    index, media = indexed
    talk = media / "talk.mkv"
    talk.write_bytes(b"a recording overwritten by garbage")
    index.ingest([talk])
    entries = [e for e in index.library() if e.path == str(talk)]
    assert sorted(e.status for e in entries) == ["failed", "indexed"]
    assert index.search("Hallo Welt")  # the version indexed before is still searchable
    index.close()
    assert main(["list", "--index", str(index.path)]) == 0
    assert f"failed   {talk}" in capsys.readouterr().out
