"""What a multimodal LLM request may carry: images as bounded JPEGs, at most so many.

Shared by the Claude and Gemini LLMs, which differ only in how they wrap the result.
A frame may be any size and format (a path, raw or base64 bytes, a ``data:`` URL);
each one is shrunk to a long edge the API takes and re-encoded as JPEG, which every
multimodal API reads and which keeps a request of many frames small.

:class:`BlockBudget` counts the blocks of one request against their limits and
remembers what it had to leave out (over the limit, unreadable, a block type the
API cannot take), so one request logs one warning per kind of loss instead of one
per block, and nothing is dropped silently.
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from typing import Final

from llama_index.core.base.llms.types import ImageBlock
from PIL import Image

logger = logging.getLogger(__name__)

JPEG_QUALITY: Final = 85


def jpeg_bytes(block: ImageBlock, *, max_edge: int) -> bytes:
    """The image of ``block`` as JPEG bytes, shrunk to at most ``max_edge`` on its long edge.

    Args:
        block: A LlamaIndex image block holding bytes (raw or base64), a file path or
            a URL (``data:`` URLs are decoded, ``http(s)`` ones downloaded).
        max_edge: Longest edge in pixels after shrinking; smaller images keep their size.

    Returns:
        An RGB JPEG (transparency is flattened), aspect ratio kept.

    Raises:
        OSError: The image cannot be read or decoded.
        ValueError: The block holds no image data.
        PIL.Image.DecompressionBombError: The image is implausibly large.
    """
    data = block.resolve_image().read()
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((max_edge, max_edge))  # keeps the aspect ratio, never enlarges
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


class BlockBudget:
    """The limits of one request, and what converting its blocks left out.

    Args:
        service: Name that starts every warning (``"Claude"``, ``"Gemini"``).
    """

    def __init__(self, service: str) -> None:
        self.service = service
        self._seen: Counter[str] = Counter()
        self._limits: dict[str, tuple[int, str]] = {}
        self._unreadable: list[str] = []
        self._unsupported: Counter[str] = Counter()

    def admit(self, kind: str, *, limit: int, option: str) -> bool:
        """Count one more ``kind`` block; whether it is still within ``limit``.

        Blocks come most relevant first, so the first ``limit`` are kept.

        Args:
            kind: What is counted, in the plural form used in warnings (``"images"``).
            limit: Most blocks of this kind in one request.
            option: The setting that sets ``limit``, named in the warning.
        """
        self._seen[kind] += 1
        self._limits[kind] = (limit, option)
        return self._seen[kind] <= limit

    def jpeg(self, block: ImageBlock, *, max_edge: int) -> bytes | None:
        """:func:`jpeg_bytes` of ``block``, or ``None`` (remembered) when it is unreadable."""
        try:
            return jpeg_bytes(block, max_edge=max_edge)
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            self.unreadable(f"image {block.path or 'bytes'}", exc)
            return None

    def unreadable(self, what: str, exc: Exception) -> None:
        """Remember a block left out because it could not be read."""
        self._unreadable.append(f"{what} ({exc})")

    def unsupported(self, block_type: str) -> None:
        """Remember a block left out because the API cannot take its type."""
        self._unsupported[block_type] += 1

    def report(self) -> None:
        """Log one warning per kind of block left out."""
        for kind, (limit, option) in self._limits.items():
            if self._seen[kind] > limit:
                logger.warning(
                    "%s: sent the first %d of %d %s (%s=%d); dropped the rest",
                    self.service,
                    limit,
                    self._seen[kind],
                    kind,
                    option,
                    limit,
                )
        for what in self._unreadable:
            logger.warning("%s: left out an unreadable %s", self.service, what)
        for block_type, count in sorted(self._unsupported.items()):
            logger.warning(
                "%s: left out %d %s block(s) %s cannot take",
                self.service,
                count,
                block_type,
                self.service,
            )
