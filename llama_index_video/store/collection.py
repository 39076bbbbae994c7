"""The default vector store: a persistent Chroma collection in cosine space."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index_video.errors import MissingDependencyError

if TYPE_CHECKING:
    from llama_index.vector_stores.chroma import ChromaVectorStore

DEFAULT_COLLECTION = "video_moments"


def open_chroma(folder: Path, collection: str = DEFAULT_COLLECTION) -> ChromaVectorStore:
    """Open (or create) ``collection`` in a persistent Chroma database at ``folder``."""
    try:
        import chromadb
        from chromadb.config import Settings
        from llama_index.vector_stores.chroma import ChromaVectorStore
    except ImportError as exc:
        raise MissingDependencyError(
            "llama-index-vector-stores-chroma", "local", "The default Chroma index"
        ) from exc
    folder.mkdir(parents=True, exist_ok=True)
    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )
    chroma_collection = client.get_or_create_collection(
        collection, configuration={"hnsw": {"space": "cosine"}}
    )
    return ChromaVectorStore(chroma_collection=chroma_collection)


def chroma_collection(store: Any) -> Any | None:
    """The ``chromadb`` collection behind a LlamaIndex vector store; None when not Chroma."""
    try:
        from llama_index.vector_stores.chroma import ChromaVectorStore
    except ImportError:  # without the Chroma integration no store can be Chroma
        return None
    return store.client if isinstance(store, ChromaVectorStore) else None


def release_chroma(folder: Path) -> None:
    """Drop this process's cached Chroma database for ``folder``.

    Chroma keeps one open database per folder and process and reuses it for every
    client; its in-memory vector index never sees rows another process added. After
    this call the next :func:`open_chroma` on ``folder`` reads the folder afresh. Only
    call it when nothing uses a collection opened from ``folder`` any more.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:  # without Chroma nothing can be cached
        return
    # Chroma's cache has no public per-folder eviction; it is keyed by the path string
    # open_chroma passes. Stopping the system closes its SQLite and segment files.
    system = SharedSystemClient._identifier_to_system.pop(str(folder), None)
    SharedSystemClient._identifier_to_refcount.pop(str(folder), None)
    if system is not None:
        system.stop()
