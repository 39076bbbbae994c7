"""Chapters for recordings already indexed without them, made from what the index stores.

A recording indexed before chapters existed (or with a model that keeps failures per
node, whose ingest makes none) has transcript units but no chapters; one whose
chapter making was interrupted has units that do not all point at its stored
chapters, or rows the manifest does not count. ``verify --repair`` makes their chapters
here from the stored units and their stored vectors: nothing is transcribed or
embedded again. The chapters are the ones ingest would make of the same units
(:func:`~llama_index_video.chapters.nodes.chapter_nodes`), written by
:meth:`~llama_index_video.store.index_writer.IndexWriter.amend`: chapter rows added,
the units' chapter and title rewritten in place, the manifest's count last. A kill
anywhere leaves the recording due, and the next repair makes the same chapters again
(their ids come from their spans).

Only a store whose rows can be read back with their vectors does this (Chroma); with
another LlamaIndex vector store, chapters come with a re-ingest.
"""

from __future__ import annotations

import logging
from typing import Any

from llama_index_video import schema
from llama_index_video.chapters.nodes import chapter_nodes, transcript_units
from llama_index_video.chapters.segment import worth_chapters
from llama_index_video.store.collection import content_rows, nodes_with_vectors
from llama_index_video.store.index_writer import IndexWriter
from llama_index_video.store.manifest import Manifest

logger = logging.getLogger(__name__)


def chapters_due(store: Any, manifest: Manifest) -> list[str]:
    """The indexed contents whose chapters are missing or unfinished (module docstring);
    [] from a store that cannot list its rows."""
    due = []
    for record in manifest.files("indexed"):
        rows = content_rows(store, record.content_hash)
        if rows is None:
            return []
        if unfinished(rows, record.node_count):
            due.append(record.content_hash)
    return due


def unfinished(rows: dict[str, dict[str, Any]], counted: int) -> bool:
    """Whether a content of these ``rows`` (flat metadata by id), ``counted`` of them in
    the manifest, is long enough for chapters and lacks them: a unit pointing at no
    stored chapter, a chapter no unit points at, or rows not counted."""
    units = [m for m in rows.values() if m.get(schema.MODALITY) == "transcript"]
    spans = sorted((float(m[schema.START_S]), float(m[schema.END_S])) for m in units)
    if not worth_chapters(spans):
        return False
    chapters = {key for key, m in rows.items() if m.get(schema.MODALITY) == "chapter"}
    pointed = {m.get(schema.CHAPTER) for m in units}
    return not chapters or pointed != chapters or len(rows) != counted


def make_chapters(writer: IndexWriter, store: Any, content_hash: str) -> int:
    """Make one indexed content's chapters from its stored units; how many it has."""
    rows = content_rows(store, content_hash) or {}
    units = transcript_units(
        nodes_with_vectors(
            store, [k for k, m in rows.items() if m.get(schema.MODALITY) == "transcript"]
        )
    )
    chapters = chapter_nodes(units)
    made = {chapter.node_id for chapter in chapters}
    stale = {k for k, m in rows.items() if m.get(schema.MODALITY) == "chapter"} - made
    writer.amend(content_hash, add=chapters, rewrite=units, drop=stale)
    return len(chapters)


def make_due_chapters(writer: IndexWriter, store: Any, manifest: Manifest) -> dict[str, int]:
    """Make the chapters of every content :func:`chapters_due` finds; how many each got."""
    made = {}
    for content_hash in chapters_due(store, manifest):
        made[content_hash] = make_chapters(writer, store, content_hash)
        logger.info("made %d chapters of %s", made[content_hash], content_hash[:12])
    if made:
        writer.settle_amends()
    return made
