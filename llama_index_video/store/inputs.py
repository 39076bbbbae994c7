"""Ingesting a mix of paths and links, in input order.

Each link is downloaded into the index's ``media/downloads`` folder first
(:func:`llama_index_video.sources.fetch_link`), then ingested like a local file; its
outcome names the link. A link that cannot be fetched becomes one failed outcome with
the reason, and the other inputs go on. Each outcome is told to ``on_file`` as soon as
it is known.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from llama_index_video.errors import VideoIndexError
from llama_index_video.sources import DownloadOptions, fetch_link, is_link, redact
from llama_index_video.sources.download import file_name_for
from llama_index_video.store.ingest import Ingestor
from llama_index_video.store.ingest_report import (
    FileOutcome,
    FileReport,
    IngestProgress,
    IngestReport,
)
from llama_index_video.store.media_paths import DOWNLOADS_FOLDER

logger = logging.getLogger(__name__)


def ingest_inputs(
    ingestor: Ingestor,
    inputs: Iterable[str | Path],
    *,
    media_dir: Path,
    options: DownloadOptions | None = None,
    progress: IngestProgress | None = None,
    on_file: FileReport | None = None,
) -> IngestReport:
    """Ingest files, folders and http(s) links; see the module docstring."""
    outcomes: list[FileOutcome] = []
    paths: list[str | Path] = []
    runs: list[IngestReport] = []

    def add(report: IngestReport) -> None:
        outcomes.extend(report.files)
        runs.append(report)

    def flush() -> None:
        if paths:
            add(ingestor.ingest(paths, on_file=on_file))
            paths.clear()

    for item in inputs:
        if not is_link(str(item)):
            paths.append(item)
            continue
        flush()
        url = str(item)
        shown = redact(url)
        name = Path(file_name_for(url))

        def report(done: int, total: int, name: Path = name) -> None:
            if progress is not None:
                progress(name, "download", done, total or done)

        try:
            local = fetch_link(url, media_dir / DOWNLOADS_FOLDER, options=options, progress=report)
        except VideoIndexError as exc:
            logger.warning("failed %s", exc)
            reason = str(exc).removeprefix(f"{shown}: ")
            failed = FileOutcome(name, "failed", reason, link=shown)
            outcomes.append(failed)
            if on_file is not None:
                on_file(failed)
            continue
        add(ingestor.ingest([local], link=shown, on_file=on_file))
    flush()
    return IngestReport(
        outcomes,
        runs[-1].unreachable if runs else 0,  # each run's repairs cover the whole index
        [path for run in runs for path in run.passed_over],
    )
