"""The manifest held at one version while another connection writes (``Manifest.hold``)."""

from __future__ import annotations

from llama_index_video.store.manifest import ContentSummary, Manifest


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
