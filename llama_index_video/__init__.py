"""Search and answer questions over video and audio in LlamaIndex, cited to the second."""

from __future__ import annotations

__version__ = "0.1.0"
