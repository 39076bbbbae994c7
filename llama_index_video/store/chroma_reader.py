"""A local Chroma folder read through Chroma's own engine, for a process that reads once.

Chroma 1.x keeps a local folder with its Rust engine (``chromadb_rust_bindings``, part
of the ``chromadb`` wheel). The ``chromadb`` package wraps that engine in a client,
settings, telemetry and per-method signature checks that cost a new process 1.1-1.4 CPU
s here, more than the rest of a cold ``search``; opening the same folder and querying it
through the engine itself costs 0.04 s and returns the same ids and distances
(docs/benchmarks.md). :func:`engine_reader` opens a folder that way for the command
line's one-shot ``search``; everything else opens Chroma as usual
(:mod:`llama_index_video.store.collection`).

:class:`ChromaEngineReader` reads only: a LlamaIndex vector store whose ``query`` and
``get_nodes`` give what ``ChromaVectorStore`` gives for the same rows (nodes from the
same metadata, scores ``exp(-distance)``, filters in Chroma's ``where`` form), and whose
``client`` answers the few ``chromadb.Collection`` calls this package makes on a read
path (``query``, ``get``, ``count``). It writes nothing (``add`` and ``delete`` refuse).
Any failure to open, including a Chroma without this engine, gives None: the caller
opens Chroma the usual way, which also says what is wrong in one line.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from llama_index_video.store.collection import DATABASE_FILE, collection_name
from llama_index_video.store.folder import CHROMA_URL_META, COLLECTION_META, IndexFolder
from llama_index_video.store.lock import read_generation
from llama_index_video.store.manifest import Manifest
from llama_index_video.store.visual import NO_VISUAL, VISUAL_META

logger = logging.getLogger(__name__)

TENANT = "default_tenant"
DATABASE = "default_database"
"""Where ``chromadb.PersistentClient`` keeps a local folder's collections."""
_OPERATORS = {
    "==": "$eq",
    "!=": "$ne",
    ">": "$gt",
    "<": "$lt",
    ">=": "$gte",
    "<=": "$lte",
    "in": "$in",
    "nin": "$nin",
}


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


class ChromaEngineReader(BasePydanticVectorStore):
    """A read-only LlamaIndex vector store over one collection of a local Chroma folder."""

    stores_text: bool = True
    flat_metadata: bool = True
    _collection: EngineCollection = PrivateAttr()

    def __init__(self, collection: EngineCollection) -> None:
        super().__init__(stores_text=True)
        self._collection = collection

    @classmethod
    def class_name(cls) -> str:
        return "ChromaEngineReader"

    @property
    def client(self) -> EngineCollection:
        return self._collection

    @property
    def engine_collection(self) -> EngineCollection:
        """What :func:`~llama_index_video.store.collection.chroma_collection` returns
        for this store (its ``client``), found without importing ``chromadb``."""
        return self._collection

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        where = chroma_where(query.filters) if query.filters is not None else None
        if not query.query_embedding:
            return self._nodes(self._collection.get(where=where, limit=query.similarity_top_k))
        found = self._collection.query(
            query_embeddings=[query.query_embedding],
            n_results=query.similarity_top_k,
            where=where,
        )
        result = self._nodes({key: found[key][0] for key in ("ids", "documents", "metadatas")})
        result.similarities = [math.exp(-distance) for distance in found["distances"][0]]
        return result

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        where = chroma_where(filters) if filters else None
        return list(self._nodes(self._collection.get(node_ids or None, where=where)).nodes or [])

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        raise NotImplementedError("ChromaEngineReader only reads")

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        raise NotImplementedError("ChromaEngineReader only reads")

    @staticmethod
    def _nodes(found: dict[str, Any]) -> VectorStoreQueryResult:
        rows = zip(found["ids"], found["documents"], found["metadatas"], strict=True)
        nodes = [metadata_dict_to_node(metadata, text=text) for _, text, metadata in rows]
        return VectorStoreQueryResult(nodes=nodes, ids=list(found["ids"]))


def chroma_where(filters: MetadataFilters) -> dict[str, Any]:
    """LlamaIndex metadata filters in Chroma's ``where`` form, as ``ChromaVectorStore``
    writes them."""
    clauses: list[dict[str, Any]] = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            clauses.append(chroma_where(item))
        else:
            clauses.append(_clause(item))
    if len(clauses) == 1:
        return clauses[0]
    condition = str(getattr(filters.condition, "value", filters.condition) or "and")
    return {f"${condition}": clauses} if clauses else {}


def _clause(item: MetadataFilter) -> dict[str, Any]:
    operator = str(getattr(item.operator, "value", item.operator))
    if operator not in _OPERATORS:
        raise ValueError(f"filter operator {operator} has no Chroma form")
    return {item.key: {_OPERATORS[operator]: item.value}}


def one_shot_reader(
    path: Path, *, chroma_url: str | None, collection: str | None
) -> ChromaEngineReader | None:
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
    return engine_reader(folder.chroma, name)


def engine_reader(folder: Path, collection: str) -> ChromaEngineReader | None:
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
    return ChromaEngineReader(EngineCollection(bindings, found))
