"""A snapshot is one finished writer's version of the folder, private, and never half-written."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from llama_index_video.index import VideoIndex
from llama_index_video.store import snapshot as snapshots
from llama_index_video.store.lock import WriterLock
from llama_index_video.store.snapshot import take_snapshot

UVC = "how much ultraviolet C radiation is absorbed"


def test_a_snapshot_searches_like_its_folder_and_points_at_the_folders_media(
    example_index, embed_model, tmp_path
):
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    taken = take_snapshot(folder)
    assert taken is not None and not taken.folder.is_relative_to(folder)
    try:
        copy = VideoIndex(taken.folder, embed_model=embed_model)
        original = VideoIndex(folder, embed_model=embed_model)
        hits = copy.search(UVC, top_k=3, modalities=["transcript", "frame", "ocr"])
        assert [h.label for h in hits] == [
            h.label
            for h in original.search(UVC, top_k=3, modalities=["transcript", "frame", "ocr"])
        ]
        frames = [h.frame_path for h in copy.search(UVC, top_k=5) if h.frame_path]
        assert frames and all(path.startswith(str(folder)) for path in frames), frames
        copy.close()
        original.close()
    finally:
        taken.discard()
    assert not taken.folder.exists()


def test_no_snapshot_while_a_writer_holds_the_lock_or_takes_it_during_the_copy(
    example_index, tmp_path, monkeypatch
):
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    with WriterLock(folder) as lock:
        lock.acquire(wait=0)
        assert take_snapshot(folder) is None
    copies = list(tmp_path.glob("*"))

    generations = iter([3, None])  # a writer took the lock while the folder was copied
    monkeypatch.setattr(snapshots, "read_generation", lambda _: next(generations))
    made = []
    real_copy = snapshots._copy_tree
    monkeypatch.setattr(
        snapshots,
        "_copy_tree",
        lambda source, target: made.append(target) or real_copy(source, target),
    )
    assert take_snapshot(folder) is None
    assert made and not any(path.exists() for path in made)  # the copy was deleted
    assert list(tmp_path.glob("*")) == copies


TAKE_AND_HOLD = """
import sys
from pathlib import Path
from llama_index_video.store.snapshot import take_snapshot
taken = take_snapshot(Path(sys.argv[1]))
print(taken.folder.parent, flush=True)
sys.stdin.readline()
"""


def test_a_copy_whose_reader_was_killed_is_deleted_by_the_next_reader_and_no_other(
    example_index, tmp_path, spawn
):
    """A copy is as big as the index; a reader killed with -9 runs no code to delete
    its own, so they piled up in the temporary folder (277 in one day of test runs)."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    temp = tmp_path / "temp"
    temp.mkdir()
    code = TAKE_AND_HOLD.replace("sys.argv[1]", repr(str(folder)))
    env = {**os.environ, "TMPDIR": str(temp)}
    killed, alive = spawn(code=code, env=env), spawn(code=code, env=env)
    killed_copy = Path(killed.stdout.readline().strip())
    alive_copy = Path(alive.stdout.readline().strip())
    assert killed_copy.is_dir() and alive_copy.is_dir(), killed.stderr.read()
    killed.kill()
    killed.wait(timeout=60)
    assert killed_copy.is_dir()  # nobody is left to delete it

    third = spawn(code=code, env=env)
    third_copy = Path(third.stdout.readline().strip())
    assert third_copy.is_dir(), third.stderr.read()
    assert not killed_copy.exists()
    assert alive_copy.is_dir()  # its reader still reads it
    for reader in (alive, third):
        reader.stdin.write("\n")
        reader.stdin.flush()
        reader.wait(timeout=60)
    assert sorted(temp.iterdir()) == []  # each deleted its own at exit


OLD_READER = """
import sys
from pathlib import Path
from llama_index_video.store.collection import open_chroma
store = open_chroma(Path(sys.argv[1]) / "chroma")  # as a reader before f11d937 held its copy
print(store.client.count(), flush=True)
sys.stdin.readline()
"""


def test_copies_left_by_earlier_versions_are_deleted_unless_a_reader_holds_them(
    example_index, tmp_path, spawn
):
    """Copies made before each got an ``owner.lock`` were never deleted by anyone. One
    that looks like ours (the prefix, an index inside), older than the bound and with no
    file of it open in any process of this user goes; one an old reader still reads, a
    recent one (it may be being made) and anything else named like ours stay."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    temp = tmp_path / "temp"
    temp.mkdir()

    def left(*, index: bool = True) -> Path:
        root = temp / f"{snapshots.PREFIX}{len(list(temp.iterdir()))}"
        (root / "index").mkdir(parents=True)
        if index:
            shutil.copytree(folder / "chroma", root / "index" / "chroma")
            shutil.copy(folder / "manifest.sqlite", root / "index" / "manifest.sqlite")
        return root

    forgotten, read, recent, other = left(), left(), left(), left(index=False)
    long_ago = time.time() - snapshots.UNLOCKED_COPY_AGE - 60
    for root in (forgotten, read, other):
        os.utime(root, (long_ago, long_ago))
    env = {**os.environ, "TMPDIR": str(temp)}
    old_reader = spawn(code=OLD_READER.replace("sys.argv[1]", repr(str(read / "index"))))
    assert old_reader.stdout.readline().strip().isdigit(), old_reader.stderr.read()

    reader = spawn(code=TAKE_AND_HOLD.replace("sys.argv[1]", repr(str(folder))), env=env)
    copy = Path(reader.stdout.readline().strip())
    assert copy.is_dir(), reader.stderr.read()
    assert not forgotten.exists()
    assert read.is_dir() and recent.is_dir() and other.is_dir()
    for process in (reader, old_reader):
        process.stdin.write("\n")
        process.stdin.flush()
        process.wait(timeout=60)
    assert sorted(temp.iterdir()) == sorted([read, recent, other])
