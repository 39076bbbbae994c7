"""Rows search cannot reach, stored again until it can: the repair behind ``verify --repair``
and the end of every ``ingest``.

A row can be stored, listed and counted, yet out of reach of every vector query: its
entry went missing from Chroma's vector index (HNSW), as when a process persisted a
stale copy of it, or no link of the graph leads to it, as happens to near-duplicate
rows. Such a row is read back, deleted and inserted again (embedded afresh: Chroma
cannot give back a vector its index lost). Whether that worked is then checked on the
graph every later process will load: Chroma stores its vector index only every
``sync_threshold`` writes and each load rebuilds the writes since from its write log,
anew each time, so the index is first stored whole
(:func:`~llama_index_video.store.collection.store_vector_index`). At most
:data:`RELINK_ROUNDS` rounds; what is still out of reach is returned, for the caller to
report rather than claim repaired.
"""

from __future__ import annotations

import logging
from pathlib import Path

from llama_index.core import VectorStoreIndex
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video.store.collection import store_vector_index
from llama_index_video.store.folder_index import resolved_node
from llama_index_video.store.integrity import unreachable_rows

logger = logging.getLogger(__name__)

RELINK_ROUNDS = 3
"""How many times unreachable rows are stored again before they are reported."""

Stores = dict[str, BasePydanticVectorStore]
"""The vector stores of an index by name, the text store first (see ``check_index``)."""


def settle(
    index: VectorStoreIndex, stores: Stores, *, folder: Path, batch_size: int
) -> dict[str, list[str]]:
    """End a run that wrote rows: store the vector indexes whole, so that every later
    load reads this graph, and :func:`relink` what search cannot reach in it.

    Returns:
        The ids still out of reach, by store name ({}: none).
    """
    for store in stores.values():
        store_vector_index(store)
    unreachable = unreachable_rows(stores)
    return relink(index, stores, unreachable, folder=folder, batch_size=batch_size)


def relink(
    index: VectorStoreIndex,
    stores: Stores,
    unreachable: dict[str, list[str]],
    *,
    folder: Path,
    batch_size: int,
) -> dict[str, list[str]]:
    """Store the ``unreachable`` rows again until search reaches them all (at most
    :data:`RELINK_ROUNDS` times); the rows of ``folder``'s index it still cannot reach
    are logged and returned."""
    for _ in range(RELINK_ROUNDS):
        if not any(unreachable.values()):
            return {}
        for name, ids in unreachable.items():
            _store_again(index, stores[name], ids, folder=folder, batch_size=batch_size)
        for store in stores.values():
            store_vector_index(store)
        unreachable = unreachable_rows(stores)
    if not any(unreachable.values()):
        return {}
    logger.warning(
        "%d stored moment(s) still cannot be found by search after %d repairs (they are "
        "found by their words only); re-ingest into a new index folder to rebuild it",
        sum(len(ids) for ids in unreachable.values()),
        RELINK_ROUNDS,
    )
    return unreachable


def _store_again(
    index: VectorStoreIndex,
    store: BasePydanticVectorStore,
    ids: list[str],
    *,
    folder: Path,
    batch_size: int,
) -> None:
    """Read, delete and insert again (embedded afresh) the rows ``ids`` of ``store``."""
    if not ids:
        return
    logger.warning(
        "%d stored moment(s) cannot be found by search (missing from the vector index); "
        "embedding them again",
        len(ids),
    )
    for start in range(0, len(ids), batch_size):
        nodes = store.get_nodes(node_ids=ids[start : start + batch_size])
        if nodes:
            store.delete_nodes([node.node_id for node in nodes])
            index.insert_nodes([resolved_node(node, folder) for node in nodes])
