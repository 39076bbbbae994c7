"""``VideoIndex``: an index folder you can ingest into, search and ask.

The folder holds a Chroma collection (``chroma/``), the frames (``media/``) and a
manifest (``manifest.sqlite``) that makes ingest incremental and records which
embedding model built the index, so opening it with another model fails clearly
instead of returning wrong results. Any LlamaIndex vector store can replace Chroma.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index.core import StorageContext, VectorStoreIndex

from llama_index_video import __version__
from llama_index_video.answering.search import SearchHit, hit_from_node
from llama_index_video.embeddings.identity import embedding_identity
from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, local_embedding
from llama_index_video.errors import IndexCompatibilityError
from llama_index_video.postprocessing.timestamp_frame import TimestampFramePostprocessor
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import DEFAULT_COLLECTION, open_chroma
from llama_index_video.store.ingest import Ingestor, IngestProgress, IngestReport
from llama_index_video.store.manifest import Manifest
from llama_index_video.store.retriever import VideoRetriever

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

logger = logging.getLogger(__name__)

INDEX_FORMAT = "1"
DEFAULT_INDEX_DIR = Path("video_index")
# Minimum cosine similarity for a hit, per embedding model, calibrated with
# benchmarks/evaluate.py (see docs/evaluation.md).
DEFAULT_THRESHOLDS: dict[str, float] = {
    f"HuggingFaceEmbedding:{DEFAULT_LOCAL_MODEL}": 0.30,
}


class VideoIndex:
    """An index folder of video, audio and text moments.

    Args:
        path: The index folder (created if missing).
        embed_model: Any LlamaIndex embedding; defaults to the local all-MiniLM-L6-v2.
        vector_store: Any LlamaIndex vector store; defaults to Chroma inside ``path``.
        reader: How files are read; defaults to a ``VideoReader`` writing frames to
            ``path/media``.
        threshold: Minimum cosine similarity of a hit. ``"auto"`` uses the calibrated
            value for the default model, and no threshold for other models.
        collection: Name of the Chroma collection.

    Raises:
        IndexCompatibilityError: the folder was built by a newer index format or with
            another embedding model.
    """

    def __init__(
        self,
        path: str | Path = DEFAULT_INDEX_DIR,
        *,
        embed_model: BaseEmbedding | None = None,
        vector_store: BasePydanticVectorStore | None = None,
        reader: VideoReader | None = None,
        threshold: float | str | None = "auto",
        collection: str = DEFAULT_COLLECTION,
    ) -> None:
        self.path = Path(path)
        self.manifest = Manifest(self.path / "manifest.sqlite")
        self.embed_model = embed_model or local_embedding()
        self.identity = embedding_identity(self.embed_model)
        self._check_compatible()
        self.vector_store = vector_store or open_chroma(self.path / "chroma", collection)
        storage = StorageContext.from_defaults(vector_store=self.vector_store)
        self.index = VectorStoreIndex(
            nodes=[], storage_context=storage, embed_model=self.embed_model
        )
        self.reader = reader or VideoReader(media_dir=self.path / "media")
        if threshold == "auto":
            self.threshold: float | None = DEFAULT_THRESHOLDS.get(self.identity)
        elif isinstance(threshold, str):
            raise ValueError(f"threshold must be a number, None or 'auto', got {threshold!r}")
        else:
            self.threshold = threshold

    def close(self) -> None:
        self.manifest.close()

    def ingest(
        self, paths: Iterable[str | Path], *, progress: IngestProgress | None = None
    ) -> IngestReport:
        """Add files and folders; unchanged content is skipped, changed content replaced."""
        self._record_identity()
        return Ingestor(self.index, self.manifest, self.reader, progress=progress).ingest(paths)

    def as_retriever(
        self, *, top_k: int = 5, modalities: Sequence[str] | None = None
    ) -> VideoRetriever:
        """A retriever with this index's threshold and cosine scores."""
        return VideoRetriever(
            self.index, top_k=top_k, modalities=modalities, threshold=self.threshold
        )

    def postprocessor(self, **options: object) -> TimestampFramePostprocessor:
        """A ``TimestampFramePostprocessor`` that looks neighbours up in this index."""
        if self.vector_store.stores_text:
            return TimestampFramePostprocessor(vector_store=self.vector_store, **options)
        return TimestampFramePostprocessor(docstore=self.index.docstore, **options)

    def search(
        self, query: str, *, top_k: int = 5, modalities: Sequence[str] | None = None
    ) -> list[SearchHit]:
        """The best moments for ``query``, with context and frames; [] if none is relevant."""
        hits = self.as_retriever(top_k=top_k, modalities=modalities).retrieve(query)
        hits = self.postprocessor().postprocess_nodes(hits, query_str=query)
        return [hit_from_node(hit, locate=self.locate) for hit in hits]

    def locate(self, content_hash: str, stored_source: str) -> str:
        """Where an indexed content is now: its stored path if still there, else a live one."""
        records = self.manifest.paths_of(content_hash)
        for record in records:
            if record.source == stored_source and Path(record.path).exists():
                return stored_source
        for record in records:
            if Path(record.path).exists():
                return record.source
        return stored_source

    def _check_compatible(self) -> None:
        version = self.manifest.get_meta("format")
        if version is not None and version != INDEX_FORMAT:
            raise IndexCompatibilityError(
                f"{self.path}: index format {version} is not readable by llama-index-video "
                f"{__version__} (format {INDEX_FORMAT}); re-ingest into a new folder"
            )
        built_with = self.manifest.get_meta("embedding")
        if built_with is not None and built_with != self.identity:
            raise IndexCompatibilityError(
                f"{self.path}: built with embedding model {built_with}, opened with "
                f"{self.identity}; open it with the same model or ingest into a new folder"
            )

    def _record_identity(self) -> None:
        with self.manifest.transaction():
            self.manifest.set_meta("format", INDEX_FORMAT)
            self.manifest.set_meta("embedding", self.identity)
            self.manifest.set_meta("created_by", f"llama-index-video {__version__}")
