"""How far reading a file has got, told to whoever asks (the CLI's progress bars)."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, float, float], None]
"""Called with a stage (``"transcribe"``, ``"frames"``, ...), how far it is and of how much."""


def no_progress(stage: str, done: float, total: float) -> None:
    """Progress is optional."""
