"""Moved to :mod:`llama_index_video.search.searcher`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import forward

__getattr__ = forward(
    __name__,
    {
        "hit_from_node": "llama_index_video.search.searcher",
        "SearchHit": "llama_index_video.results",
        "ContextSpan": "llama_index_video.results",
    },
)
