"""Progress bars for ``ingest``: one bar per file and stage, on stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_UNITS = {
    "transcribe": "s",
    "frames": "s",
    "embed": "node",
    "hash": "file",
    "text": "char",
    "download": "B",
}


class ProgressBars:
    """An ``IngestProgress`` callback drawing tqdm bars (silent when tqdm is missing)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._bar: Any = None
        self._key: tuple[Path, str] | None = None

    def __call__(self, path: Path, stage: str, done: float, total: float) -> None:
        if not self._enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._enabled = False
            return
        if self._key != (path, stage):
            self.close()
            self._key = (path, stage)
            self._bar = tqdm(
                total=round(total, 1),
                desc=f"{path.name[:40]} {stage}",
                unit=_UNITS.get(stage, ""),
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )
        self._bar.n = round(min(done, total), 1)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._key = None
