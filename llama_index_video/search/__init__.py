"""Search: how a query finds moments, between postprocessing and answering.

- :mod:`.retriever`: one vector channel (``VideoRetriever``): comparable cosine scores,
  a modality filter, the threshold, only completely written files;
- :mod:`.lexical`: the lexical channel (``LexicalRetriever``): the query's exact words
  by BM25 over the folder's lexical index, and quoted phrases that must appear;
- :mod:`.fusion`: channels of one model blended by weighted cosine (the lexical match
  added), models fused by rank;
- :mod:`.relevance`: the gate, whether the best hits are relevant enough to answer from;
- :mod:`.searcher`: retrieve, post-process, gate, and turn nodes into ``SearchHit``s;
- :mod:`.policy`: this package's choices (weights, thresholds, gates, candidate
  counts) and how an index folder wires the pieces above together.

``llama_index_video.answering`` builds answers on a searcher; ``VideoIndex`` asks its
``search_policy()`` for both.
"""
