"""Search hits as data: the ``search --json`` contract.

One object per hit, best first::

    {"source": "talks/ozone.mp4", "modality": "transcript", "start": 36.0, "end": 45.2,
     "score": 0.71, "text": "...", "label": "[ozone.mp4 00:36-00:45]",
     "url": "talks/ozone.mp4#t=36.0", "frame_path": ".../frames/ab12_000036000.jpg",
     "frame_time": 36.0, "context": [{"start": 30.1, "end": 35.9, "text": "..."}]}

``start``/``end``/``url`` are null for text documents; ``frame_path``/``frame_time``
are null when no frame is attached; ``context`` lists the neighbouring units. An
``ocr`` hit is text that stayed on screen from ``start`` to ``end``: ``text`` is the
recognised text and ``frame_path``/``frame_time`` the frame it was read from.

The list is ordered by fused rank (transcript, OCR and visual hits fused by weighted
reciprocal rank); ``score`` is the hit's cosine similarity to the query in the space
that found it (text embeddings, or text-to-image for a frame found by its pixels):
the number the relevance threshold was applied to. Similarities of different spaces
are not comparable, so ``score`` need not decrease down the list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from llama_index.core.schema import NodeWithScore

from llama_index_video import schema
from llama_index_video.postprocessing.timestamp_frame import MomentNode


@dataclass(frozen=True)
class ContextSpan:
    """A neighbouring unit shown with a hit."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class SearchHit:
    """One ranked moment (see the module docstring for the JSON shape)."""

    source: str
    modality: str
    start: float | None
    end: float | None
    score: float | None
    text: str | None
    label: str
    url: str | None
    frame_path: str | None
    frame_time: float | None
    context: list[ContextSpan] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def hit_from_node(
    hit: NodeWithScore,
    *,
    locate: Callable[[str, str], str] | None = None,
    similarity: float | None = None,
) -> SearchHit:
    """Turn a retrieved (and post-processed) node into a :class:`SearchHit`.

    Args:
        hit: The node and its score.
        locate: Maps ``(content_hash, stored_source)`` to the file's current path, so a
            file moved after indexing is reported where it is now.
        similarity: The hit's cosine similarity, reported as ``score`` (see the module
            docstring); ``None``: the node's own score.
    """
    node = hit.node
    metadata = node.metadata
    stored = str(metadata.get(schema.SOURCE, ""))
    key = metadata.get(schema.CONTENT_HASH)
    source = locate(str(key), stored) if locate and key else stored
    modality = str(metadata.get(schema.MODALITY, "text"))
    start = _float(metadata.get(schema.START_S))
    end = _float(metadata.get(schema.END_S))
    file_name = str(metadata.get(schema.FILE_NAME, stored))
    shows_frame = modality in ("frame", "ocr")
    frame_path = _str(metadata.get(schema.IMAGE_PATH)) if shows_frame else None
    frame_time = _float(metadata.get(schema.FRAME_TIME)) if shows_frame else None
    score = hit.score if similarity is None else similarity
    context: list[ContextSpan] = []
    text: str | None = node.get_content() or None
    if isinstance(node, MomentNode):
        if node.image_path or not shows_frame:  # an ocr hit keeps its own frame otherwise
            frame_path = node.image_path
            frame_time = node.frame_time
        context = [ContextSpan(round(c.start, 3), round(c.end, 3), c.text) for c in node.context]
        text = node.hit_text or None
    return SearchHit(
        source=source,
        modality=modality,
        start=start,
        end=end,
        score=None if score is None else round(score, 4),
        text=text,
        label=schema.moment_label(file_name, start, end),
        url=schema.media_fragment_url(source, start) if start is not None else None,
        frame_path=frame_path,
        frame_time=frame_time,
        context=context,
    )


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _str(value: object) -> str | None:
    return None if value is None else str(value)
