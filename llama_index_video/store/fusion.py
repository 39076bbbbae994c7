"""Moved to :mod:`llama_index_video.search.fusion`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import moved

__getattr__ = moved(
    __name__,
    "llama_index_video.search.fusion",
    "RRF_K",
    "FusedHit",
    "Channel",
    "FusionRetriever",
    "blend",
    "fuse",
    "similarities",
)
