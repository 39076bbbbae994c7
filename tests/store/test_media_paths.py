"""Media paths do not depend on the working directory (issue 11, case 6).

An index ingested with ``--index idx`` from one directory is searched from another, and
after its folder moved: frames, sources and play links still resolve. Indexes written
before (paths relative to the ingesting directory, or absolute) still work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.base.llms.types import ImageBlock
from llama_index.core.schema import MediaResource

from benchmarks.fault_injection import here
from llama_index_video import schema
from llama_index_video.answering.prompts import ContextItem, build_messages
from llama_index_video.index import VideoIndex
from llama_index_video.reader.nodes import ClipNode, FrameNode
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.service.app import create_app
from llama_index_video.sources.origin import Origin, write_origin
from llama_index_video.store.collection import chroma_collection, open_chroma
from llama_index_video.store.folder_index import resolved_node, stored_node
from llama_index_video.store.manifest import Manifest, PathRecord
from llama_index_video.store.media_paths import resolved_path, resolved_source, stored_path
from llama_index_video.store.recording_names import find_source
from tests_support import OZONE, OZONE_SRT

QUESTION = "Why does the temperature rise with altitude in the stratosphere?"
FRAME = "8e1b99052b715e5c_000036000.jpg"


def _frame(folder: Path, name: str = FRAME) -> Path:
    path = folder / "media" / "frames" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xd8\xff")
    return path


def test_paths_inside_the_folder_are_stored_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _frame(tmp_path / "idx")
    assert stored_path(f"idx/media/frames/{FRAME}", Path("idx")) == f"media/frames/{FRAME}"
    assert stored_path(tmp_path / "idx/media/frames" / FRAME, Path("idx")) == (
        f"media/frames/{FRAME}"
    )
    outside = tmp_path / "elsewhere" / FRAME
    assert stored_path("elsewhere/" + FRAME, Path("idx")) == str(outside)
    (tmp_path / "link").symlink_to(tmp_path / "idx")  # one side through a symlink
    assert stored_path(f"link/media/frames/{FRAME}", Path("idx")) == f"media/frames/{FRAME}"


def test_stored_paths_resolve_against_the_folder_from_anywhere(tmp_path, monkeypatch):
    folder = tmp_path / "idx"
    frame = _frame(folder)
    monkeypatch.chdir(tmp_path / "idx" / "media")  # a directory where the path means nothing
    assert resolved_path(f"media/frames/{FRAME}", folder) == str(frame)
    assert resolved_path(f"media/frames/{FRAME}", Path("..")) == str(frame)
    moved = tmp_path / "moved"
    folder.rename(moved)
    assert resolved_path(f"media/frames/{FRAME}", moved) == str(moved / "media/frames" / FRAME)
    # Missing everywhere: where it would be in this folder, so a caller can say so.
    assert resolved_path("media/frames/gone.jpg", moved) == str(moved / "media/frames/gone.jpg")


def test_paths_written_by_earlier_versions_still_resolve(tmp_path, monkeypatch):
    work = tmp_path / "work"
    folder = work / "idx"
    frame = _frame(folder)
    old_relative = f"idx/media/frames/{FRAME}"  # relative to the directory ingest ran in
    monkeypatch.chdir(work)
    assert resolved_path(old_relative, folder) == str(frame)  # its old meaning
    assert resolved_path(str(frame), folder) == str(frame)  # absolute stays absolute
    monkeypatch.chdir(tmp_path)
    assert resolved_path(old_relative, folder) == str(frame)  # found by name in this folder
    moved = tmp_path / "moved"
    folder.rename(moved)
    here = str(moved / "media/frames" / FRAME)
    assert resolved_path(old_relative, moved) == here
    assert resolved_path(str(frame), moved) == here  # the old absolute path is gone
    elsewhere = tmp_path / "outside" / FRAME  # media a reader wrote outside the folder
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"x")
    assert resolved_path(str(elsewhere), moved) == str(elsewhere)


def test_nodes_change_paths_in_copies_and_keep_the_originals(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame = FrameNode(
        text="On screen: ozone",
        image_path=f"idx/media/frames/{FRAME}",
        metadata={schema.IMAGE_PATH: f"idx/media/frames/{FRAME}", schema.MODALITY: "frame"},
    )
    clip = ClipNode(
        text_resource=MediaResource(text="Video clip 00:00-00:40"),
        video_resource=MediaResource(path=Path("idx/media/clips/c.mp4"), mimetype="video/mp4"),
    )
    stored_frame = stored_node(frame, Path("idx"))
    stored_clip = stored_node(clip, Path("idx"))
    assert stored_frame.image_path == stored_frame.metadata[schema.IMAGE_PATH]  # type: ignore[attr-defined]
    assert stored_frame.metadata[schema.IMAGE_PATH] == f"media/frames/{FRAME}"
    assert stored_clip.video_resource.path == Path("media/clips/c.mp4")  # type: ignore[attr-defined]
    # What LlamaIndex goes on to embed keeps the paths the reader made.
    assert frame.image_path == frame.metadata[schema.IMAGE_PATH] == f"idx/media/frames/{FRAME}"
    assert clip.video_resource.path == Path("idx/media/clips/c.mp4")  # type: ignore[union-attr]
    monkeypatch.chdir(tmp_path.parent)
    back = resolved_node(stored_frame, tmp_path / "idx")
    assert back.metadata[schema.IMAGE_PATH] == str(tmp_path / "idx/media/frames" / FRAME)
    assert resolved_node(stored_clip, tmp_path / "idx").video_resource.path == (  # type: ignore[attr-defined]
        tmp_path / "idx/media/clips/c.mp4"
    )


def test_a_path_names_the_file_it_names_here_before_the_path_as_given(tmp_path, monkeypatch):
    manifest = Manifest(tmp_path / "manifest.sqlite")
    for folder, content in (("a", "1" * 64), ("b", "2" * 64)):
        file = tmp_path / folder / "media" / "talk.mp4"
        file.parent.mkdir(parents=True)
        file.write_bytes(content.encode())
        manifest.set_path(PathRecord(str(file), "media/talk.mp4", content, 64, 0))
    monkeypatch.chdir(tmp_path / "b")  # both were ingested as "media/talk.mp4"
    assert [r.content_hash for r in find_source(manifest, "media/talk.mp4")] == ["2" * 64]
    monkeypatch.chdir(tmp_path)  # no such file here: the path as given matches both
    assert len(find_source(manifest, "media/talk.mp4")) == 2
    manifest.close()


def test_a_download_is_found_in_the_index_folder_it_moved_to(tmp_path):
    name = "talk-0123456789.mkv"
    old, folder = tmp_path / "old" / "media" / "downloads" / name, tmp_path / "new"
    assert resolved_source(str(old), folder) == str(old)  # found nowhere: as recorded
    here = folder / "media" / "downloads" / name
    here.parent.mkdir(parents=True)
    here.write_bytes(b"talk")
    write_origin(here, Origin(url="https://example.org/talk.mkv"))
    assert resolved_source(str(old), folder) == str(here.resolve())
    old.parent.mkdir(parents=True)
    old.write_bytes(b"talk")  # the folder was copied: the copy uses its own file
    assert resolved_source(str(old), folder) == str(here.resolve())
    for mine in (tmp_path / "videos" / name, tmp_path / "videos" / "downloads" / name):
        assert resolved_source(str(mine), folder) == str(mine)  # the user's files stay

    manifest = Manifest(folder / "manifest.sqlite")
    record = PathRecord(str(old), str(old), "1" * 64, 4, 0)
    manifest.set_path(record)
    assert manifest.located(record) == str(here.resolve())
    for name_or_link in ("https://example.org/talk.mkv", str(here)):
        assert find_source(manifest, name_or_link) == [record]
    manifest.close()


@pytest.fixture
def workspace(tmp_path) -> Path:
    """``media/`` with the ozone video and its subtitles (no speech recognition needed)."""
    media = tmp_path / "a" / "media"
    media.mkdir(parents=True)
    shutil.copy(OZONE, media)
    shutil.copy(OZONE_SRT, media)
    (tmp_path / "b").mkdir()
    return tmp_path


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "llama_index_video.cli.main", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _stored_image_paths(folder: Path) -> set[str]:
    rows = chroma_collection(open_chroma(folder / "chroma")).get(include=["metadatas"])
    paths = set()
    for metadata in rows["metadatas"] or []:
        paths.add(str(metadata.get(schema.IMAGE_PATH)))
        paths.add(str(json.loads(str(metadata["_node_content"])).get("image_path")))
    return paths - {"None"}


def _search(
    index: str, cwd: Path, *, run: Callable[..., subprocess.CompletedProcess[str]] = _cli
) -> list[dict]:
    result = run("search", QUESTION, "--index", index, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits
    return hits


def test_ingest_in_one_directory_search_from_another_and_after_a_move(workspace):
    a, b = workspace / "a", workspace / "b"
    # Ingested and searched in this process (fewer process starts); searched from another
    # directory, ingested again and asked by processes of their own (nothing cached).
    ingest = here("ingest", "media", "--index", "idx", "--ocr", "off", "--quiet", cwd=a)
    assert ingest.returncode == 0, ingest.stderr
    stored = _stored_image_paths(a / "idx")
    assert stored and all(p.startswith("media/frames/") for p in stored), stored

    video = str(a / "media" / OZONE.name)
    for index, cwd, run in (("idx", a, here), ("../a/idx", b, _cli)):
        for hit in _search(index, cwd, run=run):
            assert hit["source"] == hit["source_path"] == video  # not as it was given
            assert hit["url"].startswith(video + "#t=")
            assert Path(hit["frame_path"]).is_absolute() and Path(hit["frame_path"]).is_file()

    again = _cli("ingest", "../a/media", "--index", "../a/idx", "--ocr", "off", cwd=b)
    assert again.returncode == 0, again.stderr
    assert "0 indexed, 1 skipped, 0 failed" in again.stdout  # same key from any directory

    moved = workspace / "c" / "moved"
    moved.parent.mkdir()
    (a / "idx").rename(moved)
    for hit in _search(str(moved), b):
        assert hit["source_path"] == video
        assert Path(hit["frame_path"]).is_file() and Path(hit["frame_path"]).is_relative_to(moved)
    asked = _cli("ask", QUESTION, "--index", "../c/moved", cwd=b)
    assert asked.returncode == 0, asked.stderr
    frames = [
        line.split("frame: ", 1)[1] for line in asked.stdout.splitlines() if "frame: " in line
    ]
    assert frames and all(Path(frame).is_file() for frame in frames)
    assert f"play: {video}#t=" in asked.stdout


def test_a_moved_index_serves_frames_and_media_and_sends_images(workspace, embed_model):
    a = workspace / "a"
    folder = a / "idx"
    reader = VideoReader(media_dir=folder / "media", ocr="off")
    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    assert index.ingest([a / "media"]).ok
    index.close()
    moved = workspace / "moved"
    folder.rename(moved)
    index = VideoIndex(moved, embed_model=embed_model)
    try:
        assert [e.path for e in index.library()] == [str((a / "media" / OZONE.name).resolve())]
        hits = index.search(QUESTION)
        items = [ContextItem(citation=hit.citation, text=hit.text or "") for hit in hits]
        images = [b for b in build_messages(QUESTION, items)[1].blocks if isinstance(b, ImageBlock)]
        assert images and all(Path(str(image.path)).is_relative_to(moved) for image in images)
        with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
            served = client.get("/api/search", params={"q": QUESTION}).json()
            assert served[0]["media_url"] and served[0]["frame_url"]
            assert client.get(served[0]["frame_url"]).status_code == 200
            assert client.head(served[0]["media_url"]).status_code == 200
    finally:
        index.close()


def test_an_index_written_the_old_way_still_finds_its_frames(workspace, embed_model, monkeypatch):
    a, b = workspace / "a", workspace / "b"
    monkeypatch.chdir(a)
    old = VideoIndex(
        Path("idx"),
        embed_model=embed_model,
        reader=VideoReader(media_dir=Path("idx/media"), ocr="off"),
        snapshot_reads=False,  # the stores below are the folder's, written by hand
    )
    # Earlier versions stored nodes as the reader made them: relative to this directory.
    storage = StorageContext.from_defaults(vector_store=old.vector_store)
    old.index = VectorStoreIndex(nodes=[], storage_context=storage, embed_model=embed_model)
    assert old.ingest([Path("media")]).ok
    old.close()
    assert all(p.startswith("idx/media/frames/") for p in _stored_image_paths(a / "idx"))

    def frames(folder: Path) -> list[str]:
        index = VideoIndex(folder, embed_model=embed_model)
        try:
            hits = index.search(QUESTION)
        finally:
            index.close()
        assert hits
        return [hit.frame_path for hit in hits if hit.frame_path]

    assert all(Path(f).is_file() for f in frames(Path("idx")))  # where it was ingested
    monkeypatch.chdir(b)
    assert all(Path(f).is_file() for f in frames(a / "idx"))  # from another directory
    moved = workspace / "moved"
    (a / "idx").rename(moved)
    found = frames(moved)
    assert found and all(Path(f).is_file() and Path(f).is_relative_to(moved) for f in found)
