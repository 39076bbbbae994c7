"""Moved to :mod:`llama_index_video.search.fusion`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import forward

_FUSION = "llama_index_video.search.fusion"
__getattr__ = forward(
    __name__,
    {
        **dict.fromkeys(
            ("RRF_K", "Channel", "FusionRetriever", "blend", "fuse", "similarities"), _FUSION
        ),
        "FusedHit": "llama_index_video.search.node_retriever",
    },
)
