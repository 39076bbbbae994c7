"""Moved to :mod:`llama_index_video.search.relevance`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import moved

__getattr__ = moved(
    __name__,
    "llama_index_video.search.relevance",
    "DEPTH",
    "SPREAD_CANDIDATES",
    "STEM_LENGTH",
    "STOPWORDS",
    "content_words",
    "coverage",
    "hit_text",
    "standout",
    "Relevance",
    "Signal",
    "RelevanceGate",
)
