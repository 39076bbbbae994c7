"""Moved to :mod:`llama_index_video.reader.ingestion_pipeline`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import moved

__getattr__ = moved(
    __name__,
    "llama_index_video.reader.ingestion_pipeline",
    "MEDIA_PATH",
    "MEDIA_HASH",
    "READ_ERROR",
    "media_documents",
    "VideoNodeParser",
)
