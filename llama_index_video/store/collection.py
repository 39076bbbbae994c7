"""The default vector store: a Chroma collection in cosine space.

Chroma runs embedded in the index folder (``chroma/``), or as a server shared by many
processes and machines (``chroma run``), reached by URL through ``chromadb.HttpClient``.
A server's credentials come only from the environment (:data:`CHROMA_TOKEN_ENV`, sent
as ``Authorization: Bearer <token>``, or in the header named by
:data:`CHROMA_HEADER_ENV`), never from the URL, so they are never stored in the index's
manifest, printed or logged.

Chroma cannot open a local database it may not write (it sets the database up on
every open), so an index folder on a read-only share, or owned by another user, is
searched from a private copy of its ``chroma/`` folder, made when it is opened and
deleted when the process exits. Failures of the local files themselves (damaged, disk
full) leave as the package's one-line errors naming ``chroma.sqlite3``; a server that
goes away during a write, as one naming its URL.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from llama_index_video import schema
from llama_index_video.api_keys import read_api_key
from llama_index_video.errors import IndexReadOnlyError, MissingDependencyError, VectorStoreError
from llama_index_video.store.storage_errors import repaired_by_verify, translated

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode
    from llama_index.vector_stores.chroma import ChromaVectorStore

logger = logging.getLogger(__name__)

DEFAULT_COLLECTION = "video_moments"
DATABASE_FILE = "chroma.sqlite3"
_READ_ONLY_COPIES: dict[Path, Path] = {}
_RELEASES: dict[Path, int] = {}
CHROMA_TOKEN_ENV = "LLAMA_INDEX_VIDEO_CHROMA_TOKEN"
CHROMA_HEADER_ENV = "LLAMA_INDEX_VIDEO_CHROMA_HEADER"


def open_chroma(
    folder: Path,
    collection: str = DEFAULT_COLLECTION,
    *,
    url: str | None = None,
    load: bool = True,
) -> ChromaVectorStore:
    """Open (or create) ``collection`` in the Chroma server at ``url``, else in ``folder``.

    With ``load``, a local collection is read at once (its vector index loaded), so a
    damaged database fails here. Without, nothing is read until the first use: a
    process that will wait for another writer must not load the folder meanwhile, as
    Chroma's first read applies its write log and may store its vector index again,
    racing the writer that holds the lock.

    Raises:
        MissingDependencyError: Chroma's LlamaIndex integration is not installed.
        VectorStoreError: ``url`` is malformed or the server cannot be reached.
    """
    try:
        from chromadb.config import Settings
        from llama_index.vector_stores.chroma import ChromaVectorStore
    except ImportError as exc:
        raise MissingDependencyError(
            "llama-index-vector-stores-chroma", "local", "The default Chroma index"
        ) from exc
    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url is None:
        return ChromaVectorStore(chroma_collection=_local_collection(folder, collection, load))
    client = _server_client(url, settings)
    try:
        chroma_collection = client.get_or_create_collection(
            collection, configuration={"hnsw": {"space": "cosine"}}
        )
    except Exception as exc:  # chromadb raises its own errors, httpx errors and ValueError
        where = url or str(folder)
        raise VectorStoreError(f"Chroma at {where}: {type(exc).__name__}: {exc}") from exc
    return ChromaVectorStore(chroma_collection=chroma_collection)


def collection_name(given: str | None, recorded: str | None) -> str:
    """The Chroma collection of an index: the one ``given``, else the one its folder
    ``recorded``, else :data:`DEFAULT_COLLECTION`."""
    return given or recorded or DEFAULT_COLLECTION


def chroma_collection(store: Any) -> Any | None:
    """The ``chromadb`` collection behind a LlamaIndex vector store (or what answers for
    it: :class:`~llama_index_video.store.chroma_reader.ChromaEngineReader`'s); None when
    not Chroma."""
    engine = getattr(store, "engine_collection", None)
    if engine is not None:  # a ChromaEngineReader: answered without importing chromadb
        return engine
    try:
        from llama_index.vector_stores.chroma import ChromaVectorStore
    except ImportError:  # without the Chroma integration no store can be Chroma
        return None
    return store.client if isinstance(store, ChromaVectorStore) else None


def _local_collection(folder: Path, name: str, load: bool) -> Any:
    database = folder / DATABASE_FILE
    advice = repaired_by_verify(folder.parent, "index the files again from their sources")
    try:
        with translated(database, advice=advice):
            return _open_local(folder, name, load)
    except IndexReadOnlyError:
        if not database.is_file():
            raise
        with translated(database):
            return _open_local(read_only_copy(folder), name, load)


def is_read_only_copy(folder: Path) -> bool:
    """Whether ``folder`` was opened from a private copy (it may not be written)."""
    return folder.absolute() in _READ_ONLY_COPIES


def read_only_copy(folder: Path) -> Path:
    """A private, writable copy of the Chroma folder ``folder``, made once per process."""
    key = folder.absolute()
    if key not in _READ_ONLY_COPIES:
        target = Path(tempfile.mkdtemp(prefix="llama-index-video-readonly-")) / "chroma"
        shutil.copytree(folder, target)
        for path in [target, *target.rglob("*")]:  # the copy keeps the folder's modes
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        atexit.register(shutil.rmtree, target.parent, ignore_errors=True)
        logger.info("%s is read-only here; searching a private copy in %s", folder, target)
        _READ_ONLY_COPIES[key] = target
    return _READ_ONLY_COPIES[key]


def _open_local(folder: Path, name: str, load: bool) -> Any:
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError as exc:
        raise MissingDependencyError(
            "llama-index-vector-stores-chroma", "local", "The default Chroma index"
        ) from exc
    folder.mkdir(parents=True, exist_ok=True)
    try:
        client = chromadb.PersistentClient(
            path=_chroma_key(folder),
            settings=Settings(anonymized_telemetry=False, allow_reset=False),
        )
        found = client.get_or_create_collection(name, configuration={"hnsw": {"space": "cosine"}})
        if load:
            found.count()  # reads the database: a damaged one fails here, not later
    except Exception:
        _drop_cached_system(folder)  # else every later open in this process fails too
        raise
    return found


def stores_by_name(text: Any, frames: Any | None) -> dict[str, Any]:
    """An index's vector stores by the names ``verify`` reports them under: the text
    store first, then the frames' (by their pixels), if the index has one."""
    return {"text": text} if frames is None else {"text": text, "frames": frames}


def row_counts(store: Any, content_hashes: Collection[str]) -> dict[str, int] | None:
    """How many rows ``store`` holds for each content hash; None if it cannot count."""
    rows = chroma_collection(store)
    if rows is None:
        return None
    return {
        key: len(rows.get(where={schema.CONTENT_HASH: key}, include=[])["ids"])
        for key in content_hashes
    }


def content_nodes(store: Any, content_hash: str) -> list[BaseNode]:
    """The stored nodes of one content; [] from a store that cannot list its rows."""
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    filters = MetadataFilters(filters=[MetadataFilter(key=schema.CONTENT_HASH, value=content_hash)])
    try:
        return list(store.get_nodes(None, filters=filters))
    except NotImplementedError:
        return []


def content_rows(store: Any, content_hash: str) -> dict[str, dict[str, Any]] | None:
    """One content's rows: their flat metadata by id; None from a store that is not
    Chroma (only Chroma's rows are read back with their vectors and rewritten in place)."""
    rows = chroma_collection(store)
    if rows is None:
        return None
    found = rows.get(where={schema.CONTENT_HASH: content_hash}, include=["metadatas"])
    return dict(zip(found["ids"], found["metadatas"] or [], strict=True))


def nodes_with_vectors(store: Any, ids: Sequence[str], *, batch: int = 1000) -> list[BaseNode]:
    """The Chroma rows ``ids`` of ``store`` as nodes carrying their stored vectors (a
    LlamaIndex ``get_nodes`` leaves them out)."""
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    rows = _chroma_only(store)
    nodes = []
    for start in range(0, len(ids), batch):
        found = rows.get(
            ids=list(ids[start : start + batch]),
            include=["embeddings", "metadatas", "documents"],
        )
        for metadata, text, vector in zip(
            found["metadatas"], found["documents"], found["embeddings"], strict=True
        ):
            node = metadata_dict_to_node(metadata, text=text)
            node.embedding = [float(x) for x in vector]
            nodes.append(node)
    return nodes


def rewrite_rows(
    store: Any, nodes: Sequence[BaseNode], *, vectors: bool = False, batch: int = 1000
) -> None:
    """Store ``nodes``, rows ``store`` holds, over them in place (a Chroma ``update``,
    each row flattened as LlamaIndex's ``add`` does): their metadata, and with
    ``vectors`` their texts and vectors too (else the stored ones stay)."""
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    rows = _chroma_only(store)
    for start in range(0, len(nodes), batch):
        part = nodes[start : start + batch]
        metadatas = [
            {
                key: "" if value is None else value
                for key, value in node_to_metadata_dict(
                    node, remove_text=True, flat_metadata=store.flat_metadata
                ).items()
            }
            for node in part
        ]
        ids = [node.node_id for node in part]
        if not vectors:  # a text without its vector: Chroma would embed it with its own model
            rows.update(ids=ids, metadatas=metadatas)
            continue
        rows.update(
            ids=ids,
            metadatas=metadatas,
            documents=[node.get_content(metadata_mode=MetadataMode.NONE) for node in part],
            embeddings=[node.get_embedding() for node in part],
        )


def _chroma_only(store: Any) -> Any:
    rows = chroma_collection(store)
    if rows is None:
        raise VectorStoreError(
            f"{type(store).__name__}: its rows are read back with their vectors and "
            "rewritten in place only in Chroma"
        )
    return rows


def row_total(store: Any) -> int | None:
    """How many rows ``store`` holds; None if it cannot count them cheaply."""
    rows = chroma_collection(store)
    return None if rows is None else int(rows.count())


def unreachable_ids(store: Any) -> list[str] | None:
    """Ids of rows ``store`` holds that its vector index does not return; None if unknown.

    One query for as many neighbours as there are rows must return every row: a row
    it misses is listed and counted but never found by search (its vector is missing
    from Chroma's HNSW index, as a writer persisting a stale copy of it once left).
    Costs one such query: about 0.25 s for 20,000 rows here.
    """
    rows = chroma_collection(store)
    if rows is None:
        return None
    stored = list(rows.get(include=[])["ids"])
    if not stored:
        return []
    dimension = getattr(getattr(rows, "_model", None), "dimension", None)
    if not dimension:
        return None  # an empty-looking collection that still has rows: leave it to counts
    found = rows.query(
        query_embeddings=[[1.0] * int(dimension)], n_results=len(stored), include=[]
    )["ids"][0]
    reached = set(found)
    return [row for row in stored if row not in reached]


def row_metadata(store: Any, *, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """The metadata of every row ``store`` holds, in batches; nothing from a store that
    cannot list its rows."""
    rows = chroma_collection(store)
    if rows is None:
        return
    total = int(rows.count())
    for offset in range(0, total, batch):  # ends: at the count taken first
        yield from rows.get(include=["metadatas"], limit=batch, offset=offset)["metadatas"] or []


DEFAULT_SYNC_THRESHOLD = 1000
"""Chroma's ``hnsw.sync_threshold`` when a collection does not say."""
FLUSH_ID = "llama-index-video:flush:{}"
"""Ids :func:`store_vector_index` deletes: never those of a stored row."""


def store_vector_index(store: Any) -> bool:
    """Make Chroma store ``store``'s vector index whole now; False if it is not Chroma.

    Chroma stores its vector index (HNSW) only once ``sync_threshold`` writes were
    applied since it last did; every process that loads the collection builds the
    writes since then again from its write log, anew at each load and with several
    threads, and on near-duplicate rows such a build can leave a row no link leads to
    (a different one at each load). Stored whole, every later load reads the very
    graph this process holds, so a reachability check made here holds for them all.
    Chroma has no call for it: ``sync_threshold`` deletions of ids never stored are
    written, each counting towards the threshold and deleting nothing.
    """
    rows = chroma_collection(store)
    if rows is None:
        return False
    hnsw = (getattr(rows, "configuration", None) or {}).get("hnsw") or {}
    threshold = int(hnsw.get("sync_threshold") or DEFAULT_SYNC_THRESHOLD)
    rows.delete(ids=[FLUSH_ID.format(n) for n in range(threshold)])
    return True


def stray_row_ids(store: Any, keep: Collection[str]) -> list[str] | None:
    """Ids of ``store``'s rows whose content hash is not in ``keep``; None if unknown."""
    rows = chroma_collection(store)
    if rows is None:
        return None
    where = {schema.CONTENT_HASH: {"$nin": sorted(keep)}} if keep else None
    return list(rows.get(where=where, include=[])["ids"])


def check_chroma_url(url: str) -> str:
    """``url`` if it names a Chroma server (``http(s)://host[:port]``, no credentials).

    Raises:
        VectorStoreError: another scheme, no host, a path, or credentials in the URL.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise VectorStoreError(f"Chroma URL {url!r}: expected http(s)://host[:port]")
    if parts.username or parts.password:
        raise VectorStoreError(
            f"Chroma URL for {parts.hostname}: put credentials in ${CHROMA_TOKEN_ENV}, "
            "not in the URL (it is recorded in the index's manifest)"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise VectorStoreError(f"Chroma URL {url!r}: expected no path, query or fragment")
    return url


def _server_client(url: str, settings: Any) -> Any:
    import chromadb

    parts = urlsplit(check_chroma_url(url))
    ssl = parts.scheme == "https"
    try:
        return chromadb.HttpClient(
            host=parts.hostname or "",
            port=parts.port or (443 if ssl else 8000),
            ssl=ssl,
            headers=_auth_headers(),
            settings=settings,
        )
    except Exception as exc:  # unreachable, refused, or not a Chroma server
        raise VectorStoreError(
            f"Chroma server {url} cannot be reached ({type(exc).__name__}); is "
            f"'chroma run' listening there, and is ${CHROMA_TOKEN_ENV} right?"
        ) from exc


@contextmanager
def server_answering(url: str | None) -> Iterator[None]:
    """Re-raise the Chroma server at ``url`` going away inside the block (its connection
    refused, reset or timed out) as one line saying what to do; no server: nothing."""
    if url is None:
        yield
        return
    import httpx

    try:
        yield
    except httpx.TransportError as exc:
        raise VectorStoreError(
            f"Chroma server {url} stopped answering ({type(exc).__name__}); start it again "
            "and run the same command again (the index keeps everything that was complete)"
        ) from exc


def _auth_headers() -> dict[str, str]:
    token = read_api_key(None, [CHROMA_TOKEN_ENV])  # also masked in logs and errors
    if token is None:
        return {}
    header = os.environ.get(CHROMA_HEADER_ENV)
    return {header: token} if header else {"Authorization": f"Bearer {token}"}


def release_chroma(folder: Path) -> None:
    """Drop this process's cached Chroma database for ``folder``.

    Chroma keeps one open database per folder and process and reuses it for every
    client; its in-memory vector index never sees rows another process added. After
    this call the next :func:`open_chroma` on ``folder`` reads the folder afresh. Only
    call it when nothing uses a collection opened from ``folder`` any more.
    """
    try:
        import chromadb  # noqa: F401
    except ImportError:  # without Chroma nothing can be cached
        return
    copy = _READ_ONLY_COPIES.pop(folder.absolute(), None)
    _RELEASES[folder.absolute()] = _RELEASES.get(folder.absolute(), 0) + 1
    _drop_cached_system(folder)
    if copy is not None:
        _drop_cached_system(copy)
        shutil.rmtree(copy.parent, ignore_errors=True)


def releases(folder: Path) -> int:
    """How many times this process dropped its Chroma for ``folder``: a collection opened
    before the last :func:`release_chroma` no longer works and must be opened again."""
    return _RELEASES.get(folder.absolute(), 0)


def open_here(folder: Path) -> bool:
    """Whether this process has Chroma's database for ``folder`` open (cached)."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:
        return False
    return _chroma_key(folder) in SharedSystemClient._identifier_to_system


def _chroma_key(folder: Path) -> str:
    """The path Chroma is given for ``folder``, and so its cache's key: absolute, else a
    relative ``idx/chroma`` opened again after a change of directory got the database
    of the first (a different folder's rows)."""
    return str(folder.absolute())


def _drop_cached_system(folder: Path) -> None:
    from chromadb.api.shared_system_client import SharedSystemClient

    # Chroma's cache has no public per-folder eviction; it is keyed by the path string
    # open_chroma passes. Stopping the system closes its SQLite and segment files.
    system = SharedSystemClient._identifier_to_system.pop(_chroma_key(folder), None)
    SharedSystemClient._identifier_to_refcount.pop(_chroma_key(folder), None)
    if system is not None:
        try:
            system.stop()
        except AttributeError:  # it never started (opening the database failed)
            logger.debug("Chroma for %s had not started", folder)
