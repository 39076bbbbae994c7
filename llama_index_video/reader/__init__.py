"""Files in, timestamped LlamaIndex nodes out: where LlamaIndex begins.

:mod:`.video_reader` (``VideoReader``), :mod:`.speech` (speech to transcript units, and
the distributed-speech API), :mod:`.units` (transcript units), :mod:`.moments` (building
the nodes), :mod:`.nodes` (node types; which fields hold media paths), :mod:`.documents`
(text files), :mod:`.clips` (clip nodes), :mod:`.ids` (content-hash ids),
:mod:`.options` (``ReaderOptions``, the suffixes read), :mod:`.progress`,
:mod:`.ingestion_pipeline` (``VideoNodeParser``, for an ``IngestionPipeline``).
"""
