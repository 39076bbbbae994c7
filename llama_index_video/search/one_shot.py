"""A local index folder searched once without LlamaIndex: the command line's cold ``search``.

A new process that searches once spends most of its time importing what it needs:
``llama_index.core`` alone is about 1 CPU s of a cold ``search`` (docs/benchmarks.md),
yet search needs none of it. :func:`one_shot_search` runs the search of
``VideoIndex.search`` — the same :class:`~.policy.SearchPolicy` (channels, weights,
thresholds, fusion, by chapter, by a named speaker, the confidence and the gate), the
same context (:mod:`llama_index_video.postprocessing.attached`) and hits
(:func:`~.searcher.hit_from_node`) — on plain rows read through Chroma's engine
(:mod:`llama_index_video.store.chroma_engine`), with the query embedded by ONNX Runtime
alone (:class:`~llama_index_video.embeddings.onnx_runtime.SentenceEncoder`).

It serves the folders ``VideoIndex`` would open with the default embedding
(all-MiniLM-L6-v2 on ONNX) and no visual search, whose vector store holds every row the
manifest lists; for any other it returns None, and the caller opens ``VideoIndex``,
which searches them (or says in one line what is wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, onnx_model_folder
from llama_index_video.embeddings.onnx_runtime import SentenceEncoder
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.errors import IndexCompatibilityError
from llama_index_video.postprocessing.attached import MomentContexts
from llama_index_video.postprocessing.timeline import RowsTimeline
from llama_index_video.results import SearchHit
from llama_index_video.search.candidates import CollectionRetriever
from llama_index_video.search.lexical import LEXICAL_THRESHOLD
from llama_index_video.search.policy import (
    DEFAULT_CALIBRATIONS,
    DEFAULT_THRESHOLDS,
    DEFAULT_WEIGHTS,
    MINILM_IDENTITY,
    SearchPolicy,
    gate_for,
)
from llama_index_video.search.searcher import located
from llama_index_video.store.chroma_engine import EngineRows, one_shot_collection
from llama_index_video.store.folder import SPEC_META, IndexFolder, check_compatible
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.manifest import Manifest
from llama_index_video.stored import Query


def one_shot_search(
    path: Path,
    query: str,
    *,
    chroma_url: str | None = None,
    collection: str | None = None,
    relevance: str | None = "auto",
    lexical: bool = True,
    top_k: int = 5,
    modalities: Sequence[str] | None = None,
    speakers: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    by_chapter: bool = False,
    by_named_speaker: bool = False,
    sources: Sequence[str] | None = None,
    known_speakers: Callable[[], Sequence[str]] = list,
) -> list[SearchHit] | None:
    """``VideoIndex(path, ...).search(query, ...)``'s hits, without LlamaIndex; None when
    this way does not serve the folder (see the module docstring).

    The options are ``VideoIndex``'s (``chroma_url``, ``collection``, ``relevance``,
    ``lexical``) and ``VideoIndex.search``'s; ``known_speakers`` gives the index's
    speakers, for ``by_named_speaker``. ``sources`` are not served here: which recordings
    they name is ``VideoIndex``'s to say.
    """
    if sources:
        return None
    engine = one_shot_collection(path, chroma_url=chroma_url, collection=collection)
    if engine is None:
        return None
    manifest = Manifest(IndexFolder(path).manifest_file)
    try:
        if not _default_embedding(manifest, path) or engine.count() != (
            manifest.indexed_node_total()
        ):  # anything else is said (or repaired) by the usual way
            return None
        rows = EngineRows(engine)
        words = LexicalStore(path)
        policy = SearchPolicy(
            vectors=partial(CollectionRetriever, engine, rows.read),
            rows=rows.read,
            query=Query,
            embed_model=SentenceEncoder(onnx_model_folder(DEFAULT_LOCAL_MODEL)),
            visible=manifest.indexed_among,
            locate=partial(located, manifest),
            folder=path,
            threshold=DEFAULT_THRESHOLDS.get(MINILM_IDENTITY),
            weights=dict(DEFAULT_WEIGHTS),
            relevance=gate_for(relevance, MINILM_IDENTITY),
            calibration=DEFAULT_CALIBRATIONS.get(MINILM_IDENTITY),
            lexical=words if lexical else None,
            lexical_threshold=LEXICAL_THRESHOLD,
            words=words,
        )
        retriever = policy.moments(
            top_k=top_k,
            modalities=modalities,
            speakers=speakers,
            contents=None,
            languages=languages,
            by_chapter=by_chapter,
            by_named_speaker=by_named_speaker,
            known_speakers=known_speakers,
        )
        context = MomentContexts(RowsTimeline(rows.where, rows.read), index_folder=str(path))
        return policy.searcher(retriever, context).search(query)
    finally:
        manifest.close()


def _default_embedding(manifest: Manifest, path: Path) -> bool:
    """Whether the folder was built with the default embedding, and is readable by it."""
    stored = manifest.get_meta(SPEC_META)
    spec = EmbeddingSpec.from_json(stored) if stored else EmbeddingSpec()
    if spec.backend != "local" or spec.model not in (None, DEFAULT_LOCAL_MODEL):
        return False
    try:
        check_compatible(manifest, path, MINILM_IDENTITY)
    except IndexCompatibilityError:
        return False
    return True
