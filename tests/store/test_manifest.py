"""The manifest held at one version while another connection writes (``Manifest.hold``),
and which contents no path holds any more."""

from __future__ import annotations

from llama_index_video.store.manifest import ContentSummary, Manifest, PathRecord


def test_a_held_manifest_reads_its_version_and_keeps_no_write_lock(tmp_path):
    """An app reading in place holds the manifest at the version its vectors were
    loaded at while a writer of another process commits files; the summary it counts
    meanwhile is kept without leaving SQLite's write lock taken (inside the held read
    the write would have kept it until the hold ended, and the writer waited)."""
    path = tmp_path / "manifest.sqlite"
    reader, writer = Manifest(path), Manifest(path)
    try:
        writer.set_file("old", "indexed", node_count=3)
        reader.hold()
        with writer.transaction():
            writer.forget_file("old")
            writer.set_file("new", "indexed", node_count=4)
        assert [r.content_hash for r in reader.files("indexed")] == ["old"]
        assert reader.indexed_among(["old", "new"]) == {"old"}

        summary = ContentSummary({"text": 3}, "en", [])
        reader.set_summary("old", summary)  # forgotten meanwhile: not kept
        with writer.transaction():  # SQLite's write lock is free
            writer.set_file("old", "indexed", node_count=3)
        reader.set_summary("old", summary)
        assert writer.summaries() == {"old": summary}

        assert reader.holding
        reader.set_meta("note", "an app's own write")  # ends the hold: it reads what it wrote
        assert not reader.holding and reader.get_meta("note") == "an app's own write"
        assert sorted(r.content_hash for r in reader.files("indexed")) == ["new", "old"]
        reader.hold()
        with reader.transaction():
            reader.set_file("third", "indexed", node_count=1)
        assert not reader.holding and reader.file("third") is not None
    finally:
        reader.close()
        writer.close()


def test_a_held_manifest_lets_sqlite_reset_its_write_ahead_log(tmp_path):
    """The version was held as a read transaction left open on the file, and SQLite
    cannot reset the write-ahead log while one is: the ``-wal`` file of a folder an app
    kept open grew by every commit of every later writer, without bound. Held now, the
    log is reset as without a reader, and the reader still reads its version."""
    path = tmp_path / "manifest.sqlite"
    reader, writer = Manifest(path), Manifest(path)
    try:
        writer.set_file("old", "indexed", node_count=3)
        reader.hold()
        writer._db.execute("PRAGMA wal_autocheckpoint=16")  # pages, as 1000 is by default
        for number in range(150):  # some 2 pages a commit
            writer.set_file(f"new-{number}", "indexed", node_count=1, notes="x" * 2000)
        wal = path.with_name(path.name + "-wal").stat().st_size
        assert wal < 64 * 4096, f"the write-ahead log grew to {wal} bytes"
        assert [r.content_hash for r in reader.files("indexed")] == ["old"]
        reader.hold()  # the newest version
        assert len(reader.files("indexed")) == 151
    finally:
        reader.close()
        writer.close()


def test_a_content_is_held_by_no_path_once_its_last_path_is_forgotten(tmp_path):
    manifest = Manifest(tmp_path / "manifest.sqlite")
    try:
        manifest.set_file("talk", "indexed", node_count=2)
        for path in ("/media/talk.mp4", "/backup/talk.mp4"):
            manifest.set_path(PathRecord(path, path, "talk", 10, 1))

        assert not manifest.held_by_no_path("talk")
        assert not manifest.held_by_no_path("talk", but="/media/talk.mp4")
        manifest.forget_path("/backup/talk.mp4")
        assert manifest.held_by_no_path("talk", but="/media/talk.mp4")
        assert not manifest.held_by_no_path("talk")
        manifest.forget_path("/media/talk.mp4")
        assert manifest.held_by_no_path("talk")
        assert manifest.held_by_no_path("never indexed")
    finally:
        manifest.close()
