"""The default vector store: a persistent Chroma collection in cosine space."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
