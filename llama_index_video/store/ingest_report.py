"""What an ingest reports: each input file's outcome, in input order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llama_index_video.executor.base import FileProgress

Outcome = Literal["indexed", "skipped", "failed"]
IngestProgress = FileProgress
"""Called as ``progress(path, stage, done, total)``; stages: ``hash``, ``transcribe``,
``frames`` (media seconds), ``embed`` (nodes)."""


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one input file."""

    path: Path
    outcome: Outcome
    reason: str = ""
    node_count: int = 0
    content_hash: str | None = None
    pending: int = 0  # nodes that could not be embedded yet; retried by the next ingest
    link: str = ""  # the link the file was downloaded from (redacted), if any

    @property
    def moments(self) -> str:
        """How many moments the file holds, as said to the user: ``1 moment``, ``12 moments``."""
        return f"{self.node_count} moment{'' if self.node_count == 1 else 's'}"

    @property
    def shown(self) -> str:
        """How to name this input to the user: the link, else the path."""
        return self.link or str(self.path)


FileReport = Callable[[FileOutcome], None]
"""Told each file's outcome as soon as it is known, before the ingest goes on to the
next file; what it raises stops the ingest (as Ctrl-C does: finished files stay indexed)."""


@dataclass(frozen=True)
class IngestReport:
    """Every file's outcome, in input order."""

    files: list[FileOutcome] = field(default_factory=list)
    unreachable: int = 0
    """Stored rows search still cannot reach after the repairs of the run
    (:mod:`llama_index_video.store.relink`)."""
    passed_over: list[Path] = field(default_factory=list)
    """Files inside the folders given whose type is not read (a PDF beside the
    recordings): left alone, and not counted as failed."""

    def of(self, outcome: Outcome) -> list[FileOutcome]:
        return [f for f in self.files if f.outcome == outcome]

    @property
    def ok(self) -> bool:
        return (
            not self.of("failed")
            and not any(f.pending for f in self.files)
            and not self.unreachable
        )

    @property
    def passed_over_line(self) -> str:
        """One line naming what :attr:`passed_over` holds, or ``""``."""
        if not self.passed_over:
            return ""
        n = len(self.passed_over)
        kinds = sorted({path.suffix.lower() or path.name for path in self.passed_over})
        shown = ", ".join(kinds[:5]) + (", ..." if len(kinds) > 5 else "")
        return f"passed over {n} file{'' if n == 1 else 's'} of other types ({shown})"


SOURCE_GONE = (
    "its moments could not be restored: the file is gone; ingest it from where it is "
    "now, or remove it"
)


def source_gone(path: Path, content_hash: str) -> FileOutcome:
    """A file a repair could not re-index because no path the manifest recorded holds it."""
    return FileOutcome(path, "failed", SOURCE_GONE, content_hash=content_hash)
