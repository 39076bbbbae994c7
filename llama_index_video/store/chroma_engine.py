"""A local Chroma folder read through Chroma's own engine alone, for a process that reads once.

Chroma 1.x keeps a local folder with its Rust engine (``chromadb_rust_bindings``, part
of the ``chromadb`` wheel). The ``chromadb`` package wraps that engine in a client,
settings, telemetry and per-method signature checks that cost a new process 1.1-1.4 CPU
s here, more than the rest of a cold ``search``; opening the same folder and querying it
through the engine itself costs 0.04 s and returns the same ids and distances
(docs/benchmarks.md). :func:`one_shot_collection` opens a folder that way for the
command line's one-shot ``search``; everything else opens Chroma as usual
(:mod:`llama_index_video.store.collection`).

:class:`EngineCollection` answers the few ``chromadb.Collection`` calls this package
makes on a read path (``query``, ``get``, ``count``); :class:`EngineRows` reads its rows
as :class:`~llama_index_video.stored.StoredMoment`\\ s, the nodes LlamaIndex's Chroma
store would make of them (:func:`moment_of`), without LlamaIndex. Nothing here writes.
Any failure to open, including a Chroma without this engine, gives None: the caller
opens Chroma the usual way, which also says what is wrong in one line.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index_video.store.collection import DATABASE_FILE, collection_name
from llama_index_video.store.folder import CHROMA_URL_META, COLLECTION_META, IndexFolder
from llama_index_video.store.lock import read_generation
from llama_index_video.store.manifest import Manifest
from llama_index_video.store.visual import NO_VISUAL, VISUAL_META
from llama_index_video.stored import Link, StoredMoment

logger = logging.getLogger(__name__)

TENANT = "default_tenant"
DATABASE = "default_database"
"""Where ``chromadb.PersistentClient`` keeps a local folder's collections."""
NODE_CONTENT = "_node_content"
"""The metadata key under which LlamaIndex's Chroma store keeps the node itself (as JSON)."""


class EngineCollection:
    """The ``chromadb.Collection`` calls of a read path, answered by Chroma's engine."""

    def __init__(self, bindings: Any, collection: Any) -> None:
        self._bindings = bindings
        self._id = str(collection.id)
        self.name = str(collection.name)
        self.configuration = collection.configuration

    def count(self) -> int:
        return int(self._bindings.count(self._id, TENANT, DATABASE))

    def query(
        self,
        *,
        query_embeddings: Sequence[Sequence[float]],
        n_results: int = 10,
        where: dict[str, Any] | None = None,
        include: Sequence[str] = ("metadatas", "documents", "distances"),
    ) -> dict[str, Any]:
        found = self._bindings.query(
            self._id,
            None,
            [list(map(float, vector)) for vector in query_embeddings],
            n_results,
            json.dumps(where) if where else None,
            None,
            list(include),
            TENANT,
            DATABASE,
        )
        return _as_dict(found, include, ids=found.ids, distances=found.distances)

    def get(
        self,
        ids: Sequence[str] | None = None,
        *,
        where: dict[str, Any] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        include: Sequence[str] = ("metadatas", "documents"),
    ) -> dict[str, Any]:
        found = self._bindings.get(
            self._id,
            list(ids) if ids else None,
            json.dumps(where) if where else None,
            limit,
            offset or 0,
            None,
            list(include),
            TENANT,
            DATABASE,
        )
        return _as_dict(found, include, ids=found.ids)


def _as_dict(found: Any, include: Sequence[str], **fields: Any) -> dict[str, Any]:
    for name in ("documents", "metadatas"):
        fields[name] = getattr(found, name) if name in include else None
    return fields


class EngineRows:
    """The rows of a collection as :class:`~llama_index_video.stored.StoredMoment`\\ s."""

    def __init__(self, collection: EngineCollection) -> None:
        self.collection = collection

    def read(self, ids: list[str]) -> list[StoredMoment]:
        """The rows of ``ids`` (those missing left out)."""
        return self._moments(self.collection.get(ids)) if ids else []

    def where(self, where: dict[str, Any]) -> list[StoredMoment]:
        """The rows that match ``where`` (Chroma's form)."""
        return self._moments(self.collection.get(where=where))

    @staticmethod
    def _moments(found: dict[str, Any]) -> list[StoredMoment]:
        rows = zip(found["documents"], found["metadatas"], strict=True)
        return [moment_of(text, metadata) for text, metadata in rows]


def moment_of(text: str | None, metadata: dict[str, Any]) -> StoredMoment:
    """The node a row of LlamaIndex's Chroma store holds, as plain data: what
    ``metadata_dict_to_node`` reads of it (the node as JSON under ``_node_content``, its
    text in the row's document)."""
    node = json.loads(metadata[NODE_CONTENT])
    links = {
        str(kind): Link(str(related["node_id"]))
        for kind, related in (node.get("relationships") or {}).items()
        if isinstance(related, dict)
    }
    return StoredMoment(
        node_id=str(node["id_"]),
        text=text if text is not None else str(node.get("text") or ""),
        metadata=dict(node.get("metadata") or {}),
        relationships=links,
        image_path=node.get("image_path"),
    )


def one_shot_collection(
    path: Path, *, chroma_url: str | None, collection: str | None
) -> EngineCollection | None:
    """The text collection of the index folder ``path`` (which must exist) read through
    Chroma's engine, for a process that reads it once; None when the folder keeps its
    vectors on a Chroma server, has frame vectors too, is being written (its write
    generation is unknown), or cannot be opened so. ``chroma_url`` and ``collection``
    are as ``VideoIndex`` takes them."""
    if chroma_url is not None or read_generation(path) is None:
        return None
    folder = IndexFolder(path)
    manifest = Manifest(folder.manifest_file)
    try:
        if manifest.get_meta(CHROMA_URL_META) or manifest.get_meta(VISUAL_META) not in (
            None,
            NO_VISUAL,
        ):
            return None
        name = collection_name(collection, manifest.get_meta(COLLECTION_META))
    finally:
        manifest.close()
    return engine_collection(folder.chroma, name)


def engine_collection(folder: Path, collection: str) -> EngineCollection | None:
    """``collection`` of the local Chroma folder ``folder``, read through Chroma's engine;
    None when it cannot be (no such engine, no such collection, a damaged database)."""
    database = folder / DATABASE_FILE
    if not database.is_file():
        return None
    try:
        import resource

        import chromadb_rust_bindings as engine

        config = engine.SqliteDBConfig(
            hash_type=engine.MigrationHash.MD5,
            migration_mode=engine.MigrationMode.Apply,
            url=str(database),
        )
        bindings = engine.Bindings(
            allow_reset=False,
            sqlite_db_config=config,
            persist_path=str(folder),
            hnsw_cache_size=resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 5,
        )
        found = bindings.get_collection(collection, TENANT, DATABASE)
    except Exception as exc:  # an engine of another Chroma, or a folder it cannot open
        logger.debug("%s: not read through Chroma's engine: %s", folder, exc)
        return None
    return EngineCollection(bindings, found)
