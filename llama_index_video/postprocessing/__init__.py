"""After retrieval: each hit becomes a moment with its neighbours, frame and screen text.

:mod:`.timestamp_frame` (``TimestampFramePostprocessor``, ``MomentNode``), :mod:`.context`
(finding the context by stored links or by time ranges), :mod:`.timeline` (a file's
nodes by time, from a docstore or a vector store).
"""
