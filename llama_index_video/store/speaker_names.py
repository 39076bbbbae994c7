"""Naming a recording's speakers: ``SPEAKER_2`` becomes ``Diane Lee`` in every unit.

Diarization labels voices per file (``SPEAKER_1``, ``SPEAKER_2``... by first
appearance), so a label means nothing outside its recording. A name given to a label
is written into the stored rows themselves: the ``speaker`` metadata of each of its
transcript units in the vector store (its flat field and the node JSON LlamaIndex
rebuilds nodes from) and in the lexical index. Search filters, hits, answers,
transcripts, the library and the tools then show the name with no lookup at read time,
and the embeddings stay as they are (the speaker is never embedded). Naming again
works the same way, from the current name.

The caller holds the writer lock. The vector rows are updated in one call, then the
lexical rows; a run interrupted between the two is finished by running it again, which
finds nothing left under the old label in the vectors and copies the names to the
lexical index. Only Chroma (local or server) changes metadata in place, so naming needs
it.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video import schema
from llama_index_video.errors import MomentRequestError, VectorStoreError
from llama_index_video.speakers.base import SPEAKER_PREFIX, speaker_label, speaker_order
from llama_index_video.store.collection import chroma_collection
from llama_index_video.store.lexical import LexicalStore

MAX_NAME_LENGTH = 100
NODE_JSON = "_node_content"  # where LlamaIndex's Chroma store keeps the whole node


def check_speaker_name(name: str) -> str:
    """``name`` with its spaces tidied.

    Raises:
        ValueError: it is empty, longer than :data:`MAX_NAME_LENGTH` characters, or holds
            control characters or a comma (``--speaker`` separates names by commas), or
            is a label (``SPEAKER_2``, ``2``).
    """
    tidy = " ".join(name.split())
    if not tidy or len(tidy) > MAX_NAME_LENGTH or not tidy.isprintable() or "," in tidy:
        raise ValueError(
            f"{name!r}: a speaker's name is 1-{MAX_NAME_LENGTH} printable characters, no comma"
        )
    if speaker_label(tidy) != tidy or tidy.startswith(SPEAKER_PREFIX):
        raise ValueError(f"{name!r}: a label (SPEAKER_2, 2) cannot be a name; give a person's")
    return tidy


def rename_speaker(
    store: BasePydanticVectorStore,
    lexical: LexicalStore,
    content_hash: str,
    speaker: str,
    name: str,
    *,
    shown: str,
    only: Collection[tuple[float, float]] | None = None,
) -> int:
    """Call ``speaker`` ``name`` in every stored unit of ``content_hash`` (or in those of
    them whose ``(start, end)`` seconds are in ``only``); returns how many units now carry
    the name (``shown`` names the recording in errors).

    Raises:
        MomentRequestError: no unit of the recording has this speaker (the message lists
            the speakers it has).
        VectorStoreError: the vector store is not Chroma.
    """
    collection = chroma_collection(store)
    if collection is None:
        raise VectorStoreError(
            f"{shown}: naming speakers needs the Chroma store (the index's default); "
            f"{type(store).__name__} cannot change stored metadata in place"
        )
    rows = collection.get(
        where={"$and": [{schema.CONTENT_HASH: content_hash}, {schema.SPEAKER: speaker}]},
        include=["metadatas"],
    )
    chosen = [
        (row, meta)
        for row, meta in zip(rows["ids"], rows["metadatas"], strict=True)
        if only is None or (meta[schema.START_S], meta[schema.END_S]) in only
    ]
    if chosen:
        collection.update(
            ids=[row for row, _ in chosen], metadatas=[_named(meta, name) for _, meta in chosen]
        )
    named = store.get_nodes(
        None,
        filters=_filters(content_hash, name),  # also what an interrupted run named
    )
    if not named:
        raise MomentRequestError(
            f"{shown}: no unit was said by {speaker!r}; its speakers: "
            f"{', '.join(speakers_of(store, content_hash)) or 'none (ingest with --speakers)'}"
        )
    lexical.add(named)
    return len(named)


def speakers_of(store: BasePydanticVectorStore, content_hash: str) -> list[str]:
    """The speakers (labels or names) stored for a content, labels by number first."""
    collection = chroma_collection(store)
    if collection is None:
        return []
    rows = collection.get(where={schema.CONTENT_HASH: content_hash}, include=["metadatas"])
    speakers = {str(m[schema.SPEAKER]) for m in rows["metadatas"] if m.get(schema.SPEAKER)}
    return sorted(speakers, key=speaker_order)


def _named(meta: dict[str, Any], name: str) -> dict[str, Any]:
    renamed = {**meta, schema.SPEAKER: name}
    if NODE_JSON in meta:
        node = json.loads(meta[NODE_JSON])
        node.setdefault("metadata", {})[schema.SPEAKER] = name
        renamed[NODE_JSON] = json.dumps(node)
    return renamed


def _filters(content_hash: str, speaker: str) -> Any:
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    return MetadataFilters(
        filters=[
            MetadataFilter(key=schema.CONTENT_HASH, value=content_hash),
            MetadataFilter(key=schema.SPEAKER, value=speaker),
        ]
    )
