"""``VideoIndex.ingest(on_file=...)`` is told each file's outcome as soon as it is known.

Nothing was told before the whole run ended (the report), so a caller could not show
what was done while a folder of long recordings was read.
"""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

from llama_index_video.index import VideoIndex
from llama_index_video.sources.download import DownloadOptions
from llama_index_video.store.ingest_report import FileOutcome


def test_each_outcome_is_told_before_the_next_file_is_read(text_folder, tmp_path, embed_model):
    events: list[tuple[str, str]] = []

    def progress(path: Path, stage: str, done: float, total: float) -> None:
        if stage != "hash":  # every file is hashed before the first is read
            events.append(("read", path.name))

    def on_file(outcome: FileOutcome) -> None:
        events.append((outcome.outcome, Path(outcome.shown).name))

    refused = "http://127.0.0.1:9/talk.mp4"  # nothing listens on the discard port
    index = VideoIndex(tmp_path / "index", embed_model=embed_model)
    try:
        report = index.ingest(
            [text_folder, refused, text_folder / "handbook.md"],
            progress=progress,
            on_file=on_file,
            downloads=DownloadOptions(attempts=1),
        )
    finally:
        index.close()

    assert [event for event, _ in groupby(events)] == [
        ("read", "handbook.md"),
        ("indexed", "handbook.md"),
        ("read", "release_notes.md"),
        ("indexed", "release_notes.md"),
        ("failed", "talk.mp4"),
        ("skipped", "handbook.md"),
    ]
    told = [(o.outcome, Path(o.shown).name) for o in report.files]
    assert told == [event for event in events if event[0] != "read"]
    assert report.files[2].shown == refused
