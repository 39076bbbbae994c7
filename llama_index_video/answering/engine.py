"""Moved to :mod:`llama_index_video.answering.answerer`.

Still importable from here, with a ``DeprecationWarning``, until the next release.
"""

from llama_index_video._moved import moved

__getattr__ = moved(
    __name__,
    "llama_index_video.answering.answerer",
    "LlmChoice",
    "NO_ANSWER_TEXT",
    "AskOptions",
    "VideoAnswerer",
    "AnswerStream",
    "make_llm",
)
