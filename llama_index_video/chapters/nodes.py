"""Chapters as stored nodes: made from a recording's transcript units at ingest, read back.

A chapter node (modality ``chapter``) spans its units; its vector is the mean of their
vectors (no model call, and a topic question lands near it), its text the title and
the :data:`CENTRAL_UNITS` units closest to that mean, in time order. Each unit records
its chapter's id under :data:`~llama_index_video.schema.CHAPTER` and its title under
:data:`~llama_index_video.schema.TITLE`, so a hit says which chapter it belongs to and a
chapter's moments are one metadata filter away. Chapter
nodes are rows of their file like its units: counted in the manifest, deleted with
the file, and made again whenever the file is read again (``ingest``, and ``verify
--repair`` re-marking a damaged file).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.schema import BaseNode, NodeRelationship, TextNode

from llama_index_video import schema
from llama_index_video.chapters.segment import TimedVector, chapter_starts, worth_chapters
from llama_index_video.chapters.titles import chapter_titles
from llama_index_video.executor.base import embed_in_batches
from llama_index_video.reader.ids import millis, stable_id
from llama_index_video.results import Chapter

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

CENTRAL_UNITS = 3
"""How many of a chapter's most central units its node's text holds."""
# What a chapter shares with its first unit: where the recording is and where it starts.
_SHARED_KEYS = (
    schema.SOURCE,
    schema.FILE_NAME,
    schema.CONTENT_HASH,
    schema.ORIGIN_URL,
    schema.START_S,
    schema.TIME_LABEL,
    schema.MEDIA_URL,
    schema.SITE_URL,
    schema.LANGUAGE,
)


def add_chapters(
    nodes: Sequence[BaseNode], embed_model: BaseEmbedding, *, batch_size: int
) -> list[TextNode]:
    """The chapter nodes of one file's ``nodes``; its units learn their chapter.

    Units not embedded yet are embedded here, in batches of ``batch_size``, with the
    model the index would embed them with (the index then keeps these vectors rather
    than embedding them again). ``[]`` for a recording too short to chapter.
    """
    units = transcript_units(nodes)
    if not worth_chapters([_span(unit) for unit in units]):
        return []
    embed_in_batches([u for u in units if u.embedding is None], embed_model, batch_size)
    return chapter_nodes(units)


def transcript_units(nodes: Sequence[BaseNode]) -> list[BaseNode]:
    """The transcript units among ``nodes``, in time order (what chapters are made of)."""
    return sorted(
        (n for n in nodes if n.metadata.get(schema.MODALITY) == "transcript"),
        key=lambda n: float(n.metadata[schema.START_S]),
    )


def chapter_nodes(units: Sequence[BaseNode]) -> list[TextNode]:
    """The chapter nodes of one recording's embedded transcript ``units`` (in time order);
    each unit learns its chapter. ``[]`` for a recording too short to chapter."""
    starts = chapter_starts(
        [
            TimedVector(
                *_span(unit),
                unit.embedding or (),
                unit.get_content(),
                unit.metadata.get(schema.LANGUAGE) or None,
            )
            for unit in units
        ]
    )
    if not starts:
        return []
    groups = [units[a:b] for a, b in itertools.pairwise([*starts, len(units)])]
    titles = chapter_titles(
        [" ".join(u.get_content() for u in group) for group in groups],
        languages=[_language(group) for group in groups],
    )
    return [_chapter_node(group, title) for group, title in zip(groups, titles, strict=True)]


def _language(units: Sequence[BaseNode]) -> str | None:
    """The languages ``units`` were heard in, joined by ``+``, the most spoken (by
    characters) first: ``"fr+de"``; None if unrecorded."""
    spoken = Counter[str]()
    for unit in units:
        code = unit.metadata.get(schema.LANGUAGE)
        if code:
            spoken[str(code)] += len(unit.get_content())
    return "+".join(code for code, _ in spoken.most_common()) or None


def _span(unit: BaseNode) -> tuple[float, float]:
    return float(unit.metadata[schema.START_S]), float(unit.metadata[schema.END_S])


def _chapter_node(units: Sequence[BaseNode], title: str) -> TextNode:
    first, last = units[0], units[-1]
    start, end = float(first.metadata[schema.START_S]), float(last.metadata[schema.END_S])
    vectors = np.array([u.embedding for u in units], dtype=float)
    mean = vectors.mean(axis=0)
    mean /= np.linalg.norm(mean) or 1.0
    central = sorted(np.argsort(-(vectors @ mean), kind="stable")[:CENTRAL_UNITS])
    metadata = {k: first.metadata[k] for k in _SHARED_KEYS if k in first.metadata}
    metadata.update(
        {
            schema.MODALITY: "chapter",
            schema.END_S: round(end, 3),
            schema.LABEL: schema.moment_label(str(first.metadata[schema.FILE_NAME]), start, end),
            schema.TITLE: title,
        }
    )
    content_hash = str(first.metadata[schema.CONTENT_HASH])
    node = TextNode(
        id_=stable_id(content_hash, "chapter", millis(start), millis(end)),
        text="\n".join([title, *(units[i].get_content() for i in central)]),
        metadata=metadata,
        embedding=[float(x) for x in mean],
        excluded_embed_metadata_keys=list(schema.EMBED_EXCLUDED_KEYS),
        excluded_llm_metadata_keys=list(schema.LLM_EXCLUDED_KEYS),
    )
    source = first.relationships.get(NodeRelationship.SOURCE)
    if source is not None:
        node.relationships[NodeRelationship.SOURCE] = source
    for unit in units:
        unit.metadata[schema.CHAPTER] = node.node_id
        unit.metadata[schema.TITLE] = title
    return node


def stored_chapters(store: Any, content_hash: str) -> list[Chapter]:
    """The chapters stored for one content, in time order; [] when it has none (or the
    store cannot filter its rows)."""
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    filters = MetadataFilters(
        filters=[
            MetadataFilter(key=schema.CONTENT_HASH, value=content_hash),
            MetadataFilter(key=schema.MODALITY, value="chapter"),
        ]
    )
    try:
        nodes = store.get_nodes(None, filters=filters)
    except NotImplementedError:
        return []
    return sorted((Chapter.from_node(n) for n in nodes), key=lambda c: c.start)
