"""Recordings through LlamaIndex's ``IngestionPipeline``, re-read only when they change.

``IngestionPipeline`` skips unchanged input by the hash its docstore keeps per input
document id, and replaces a document whose hash changed (``UPSERTS``). Moments read
from a file are not that input: their ``ref_doc_id`` names their file, so a pipeline
given moments looks up a hash it never stored and re-embeds every node on every run.
The input a pipeline can track is one ``Document`` per file, whose hash follows the
file's bytes; reading it into moments is a transformation::

    reader = VideoReader(media_dir="media")
    pipeline = IngestionPipeline(
        transformations=[VideoNodeParser(reader=reader), local_embedding()],
        docstore=SimpleDocumentStore(),
        vector_store=vector_store,
    )
    pipeline.run(documents=media_documents(["talk.mp4", "notes.md"]))

A second run over unchanged files reads and embeds nothing; a changed file's old moments
are deleted from the vector store (they carry the document's id as ``ref_doc_id``) and
its new ones added.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.schema import (
    BaseNode,
    Document,
    NodeRelationship,
    TransformComponent,
)
from pydantic import ConfigDict, Field

from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.reader.ids import content_hash, stable_id
from llama_index_video.reader.video_reader import VideoReader

logger = logging.getLogger(__name__)

MEDIA_PATH = "media_path"
"""Document metadata: the file a media document stands for."""
MEDIA_HASH = "media_hash"
"""Document metadata: the sha256 of its bytes, so the document's hash changes with them."""
READ_ERROR = "read_error"
"""Set on a document that could not be read, so the docstore records a hash the next
run will not match and the file is read again."""

_OWN_KEYS = (MEDIA_PATH, MEDIA_HASH, READ_ERROR)


def media_documents(
    paths: Iterable[str | Path], extra_info: Mapping[str, object] | None = None
) -> list[Document]:
    """One ``Document`` per file, with an id that follows its path and a hash its bytes.

    Args:
        paths: Video, audio, ``.md`` or ``.txt`` files.
        extra_info: Your metadata for every moment of these files (flat values).

    Raises:
        MediaError: a file is missing or cannot be read (naming it), before any work.
    """
    documents = []
    for given in paths:
        path = Path(given).absolute()
        try:
            file_hash = content_hash(path)
        except OSError as exc:
            raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from exc
        metadata = {**(extra_info or {}), MEDIA_PATH: str(path), MEDIA_HASH: file_hash}
        documents.append(
            Document(
                id_=stable_id("path", str(path)),
                text=str(path),
                metadata=metadata,
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata),
            )
        )
    return documents


class VideoNodeParser(TransformComponent):
    """Reads each media document (see :func:`media_documents`) into its moments.

    Other nodes pass through unchanged. The moments keep their own stable ids and take
    the document's id as ``ref_doc_id``, so the pipeline's upserts and deletes reach
    them. A file that cannot be read is logged (one line naming it and the reason) and
    yields nothing; the others go on, and the next run reads it again. With the
    reader's ``raise_on_error`` the error is raised instead.

    The pipeline's transformation cache never answers for this step: its key holds
    neither the reader's settings nor a failure of the last read, so a cached result
    could skip a file that failed or keep moments read with other settings. Skipping
    unchanged files is the docstore's job.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    reader: VideoReader = Field(description="How files are read.")
    run_id: str = Field(
        default_factory=lambda: uuid.uuid4().hex,
        description="New for every call, so no cache key of this step is ever met again.",
    )

    @classmethod
    def class_name(cls) -> str:
        """The serialisation id."""
        return "VideoNodeParser"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[BaseNode]:
        self.run_id = uuid.uuid4().hex
        parsed: list[BaseNode] = []
        for node in nodes:
            if not isinstance(node, Document) or MEDIA_PATH not in node.metadata:
                parsed.append(node)
                continue
            parsed.extend(self._read(node))
        return parsed

    def _read(self, document: Document) -> list[BaseNode]:
        user_metadata = {k: v for k, v in document.metadata.items() if k not in _OWN_KEYS}
        try:
            moments = list(
                self.reader.lazy_load_data(document.metadata[MEDIA_PATH], extra_info=user_metadata)
            )
        except VideoIndexError as exc:
            if self.reader.raise_on_error:
                raise
            logger.warning("skipped %s", exc)
            document.metadata[READ_ERROR] = str(exc)
            return []
        for moment in moments:
            moment.relationships[NodeRelationship.SOURCE] = document.as_related_node_info()
        return moments
