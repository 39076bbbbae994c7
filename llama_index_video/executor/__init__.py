"""Where files are read and embedded during ingest: in this process, or on a Ray cluster.

The ingest driver (:mod:`llama_index_video.store.ingest`) walks the inputs, checks the
manifest and writes every result itself, once and in input order; an executor only turns
files into nodes (:func:`~llama_index_video.executor.base.produce`). See
:mod:`llama_index_video.executor.ray` for the cluster.
"""
