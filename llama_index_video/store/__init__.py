"""The index folder: vectors, manifest, lexical index, media paths and the ingest walk.

:mod:`.collection` (Chroma, embedded or a server), :mod:`.manifest` (what is indexed),
:mod:`.lock` (the one writer), :mod:`.ingest` (incremental, resumable ingest),
:mod:`.inputs` (paths and URLs to ingest), :mod:`.lexical` (every moment's words),
:mod:`.media_paths` (frame and clip paths relative to the folder), :mod:`.visual`
(frames by their pixels), :mod:`.integrity` (``verify``), :mod:`.library` (what is
indexed, for ``list``), :mod:`.dimensions`, :mod:`.storage_errors`.
"""
