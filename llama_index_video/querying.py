"""Searching and asking a :class:`~llama_index_video.index.VideoIndex`: the facade's read side.

Every search and every answer of an index goes through its :meth:`Querying.search_policy`
(:mod:`llama_index_video.search.policy`): the fused retriever of its channels, its
thresholds and gate, and where its files are now. The attributes declared here are the
index's, set when it opens its folder (:mod:`llama_index_video.index`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.settings import Settings

from llama_index_video.answering.answerer import AskOptions, Prompt, VideoAnswerer
from llama_index_video.answering.query_engine import VideoQueryEngine
from llama_index_video.postprocessing.timestamp_frame import TimestampFramePostprocessor
from llama_index_video.recordings import Recordings
from llama_index_video.results import Answer, SearchHit
from llama_index_video.search.fusion import Retriever
from llama_index_video.search.node_retriever import NodeRetriever
from llama_index_video.search.policy import SearchPolicy
from llama_index_video.search.relevance import Calibration, Gate
from llama_index_video.search.retriever import VideoRetriever
from llama_index_video.search.searcher import Location, located
from llama_index_video.speakers.base import speaker_order
from llama_index_video.store.folder_index import nodes_by_id
from llama_index_video.store.lease import folder_lease
from llama_index_video.transcription.language import language_code

if TYPE_CHECKING:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.embeddings import MultiModalEmbedding
    from llama_index.core.llms import LLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.store.lexical import LexicalStore
    from llama_index_video.store.manifest import Manifest


class Querying(Recordings):
    """``search``, ``ask`` and the retrievers of an index folder (see the module docstring);
    what it offers about one recording comes from :class:`Recordings`."""

    path: Path
    manifest: Manifest
    index: VectorStoreIndex
    vector_store: BasePydanticVectorStore
    embed_model: BaseEmbedding
    threshold: float | None
    weights: dict[str, float]
    relevance: Gate | None
    calibration: Calibration | None
    visual_model: MultiModalEmbedding | None
    frame_store: BasePydanticVectorStore | None
    visual_threshold: float | None
    lexical: LexicalStore
    lexical_search: bool
    lexical_threshold: float | None

    def as_retriever(
        self,
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        sources: Sequence[str | Path] | None = None,
        languages: Sequence[str] | None = None,
        by_chapter: bool = False,
        by_named_speaker: bool = False,
        similarity_top_k: int | None = None,
    ) -> BaseRetriever:
        """Fused retrieval over the modalities (all by default), thresholds applied
        (:meth:`~llama_index_video.search.policy.SearchPolicy.retriever`).

        ``similarity_top_k`` is LlamaIndex's name for ``top_k`` (``index.as_retriever(
        similarity_top_k=3)`` as on a ``VectorStoreIndex``); given, it wins.

        ``speakers`` keeps only transcript units spoken by them, ``sources`` only the
        moments of these recordings (named as :meth:`recording` takes them),
        ``languages`` only what was said in them (:func:`spoken_in`);
        ``by_chapter`` scores each moment with its chapter's match too
        (:mod:`llama_index_video.search.by_chapter`); ``by_named_speaker`` keeps only
        what the speakers a question names said
        (:mod:`llama_index_video.search.speaker_named`).

        Raises:
            MomentRequestError: a source names no indexed recording, or several.
        """
        options = {
            "top_k": top_k if similarity_top_k is None else similarity_top_k,
            "modalities": modalities,
            "speakers": speakers,
            "contents": self._contents(sources),
            "languages": spoken_in(languages),
            "by_chapter": by_chapter,
            "by_named_speaker": by_named_speaker,
        }
        return NodeRetriever(
            _Following(self, lambda: self._retriever(self.search_policy(), **options)), seek=True
        )

    def _retriever(self, policy: SearchPolicy, **options: Any) -> Retriever:
        """The policy's retriever of moments (:meth:`SearchPolicy.moments`), with this
        index's speakers for a question that names one."""
        return policy.moments(known_speakers=self._speakers, **options)

    def _speakers(self) -> list[str]:
        return sorted(
            {who for entry in self.library() for who in entry.speakers}, key=speaker_order
        )

    def recording_scores(
        self, query: str | QueryBundle, best: NodeWithScore | None = None
    ) -> list[float]:
        """Cosine similarities of ``query``'s best candidates in one recording: what a
        ``standout`` relevance gate measures
        (:meth:`~llama_index_video.search.policy.SearchPolicy.recording_scores`)."""
        return self.search_policy().recording_scores(query, best)

    def search_policy(self) -> SearchPolicy:
        """How this index searches now: its channels, weights, thresholds and gate."""
        return SearchPolicy(
            vectors=self._vectors,
            rows=partial(nodes_by_id, self.index),
            query=QueryBundle,
            embed_model=self.embed_model,
            visible=self.manifest.indexed_among,
            locate=self.where,
            folder=self.path,
            threshold=self.threshold,
            weights=self.weights,
            relevance=self.relevance,
            calibration=self.calibration,
            visual_model=self.visual_model,
            frame_store=self.frame_store,
            visual_threshold=self.visual_threshold,
            lexical=self.lexical if self.lexical_search else None,
            lexical_threshold=self.lexical_threshold,
            words=self.lexical,
            version=self._version_contents,
        )

    def _vectors(self, **options: Any) -> VideoRetriever:
        """The vector channel's retriever (:class:`VideoRetriever` over :attr:`index`)."""
        return VideoRetriever(self.index, **options)

    def postprocessor(self, **options: Any) -> TimestampFramePostprocessor:
        """A ``TimestampFramePostprocessor`` that looks neighbours up in this index."""
        options.setdefault("index_folder", str(self.path))
        if self.vector_store.stores_text:
            return TimestampFramePostprocessor(vector_store=self.vector_store, **options)
        return TimestampFramePostprocessor(docstore=self.index.docstore, **options)

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        sources: Sequence[str | Path] | None = None,
        languages: Sequence[str] | None = None,
        by_chapter: bool = False,
        by_named_speaker: bool = False,
    ) -> list[SearchHit]:
        """The best moments for ``query``, with context and frames; [] if none is relevant.

        ``speakers`` (e.g. ``["SPEAKER_2"]``) keeps only what they said, ``sources``
        (e.g. ``["team_sync.mp3"]``, named as :meth:`recording` takes them) only the
        moments of these recordings; ``languages`` (``["fr"]``; ``FR``, ``fr-FR`` and
        ``French`` too) only what was said in them, transcript units whose language is
        one of these (frames, on-screen text and documents have none, so they are left
        out); ``by_chapter``: each moment scored with its chapter's
        match too (each hit's ``chapter`` names it); ``by_named_speaker``:
        a question naming one of the index's speakers as the one speaking ("what did the
        designer say ...") keeps that speaker's moments.

        Raises:
            MomentRequestError: a source names no indexed recording, or several.
        """
        with self._reading():
            self.check_store()
            contents = self._contents(sources)
            policy = self.search_policy()
            retriever = self._retriever(
                policy,
                top_k=top_k,
                modalities=modalities,
                speakers=speakers,
                contents=contents,
                languages=spoken_in(languages),
                by_chapter=by_chapter,
                by_named_speaker=by_named_speaker,
            )
            return policy.searcher(NodeRetriever(retriever), self.postprocessor()).search(query)

    async def asearch(
        self,
        query: str,
        *,
        top_k: int = 5,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        sources: Sequence[str | Path] | None = None,
        languages: Sequence[str] | None = None,
        by_chapter: bool = False,
        by_named_speaker: bool = False,
    ) -> list[SearchHit]:
        """Async :meth:`search`: the same hits, found in a worker thread (the vector store
        and the files are local, so the event loop is never blocked)."""
        return await asyncio.to_thread(
            self.search,
            query,
            top_k=top_k,
            modalities=modalities,
            speakers=speakers,
            sources=sources,
            languages=languages,
            by_chapter=by_chapter,
            by_named_speaker=by_named_speaker,
        )

    def answerer(
        self,
        *,
        llm: LLM | None = None,
        options: AskOptions | None = None,
        reranker: BaseNodePostprocessor | None = None,
        languages: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        by_named_speaker: bool = False,
    ) -> VideoAnswerer:
        """A :class:`VideoAnswerer` over this index: retrieve, rerank, attach, generate.

        Args:
            llm: A multimodal chat LLM; None takes LlamaIndex's ``Settings.llm`` if one
                was set, else answers extractively.
            options: Top-k, query fusion, images and citation handling.
            reranker: Any LlamaIndex postprocessor (e.g. ``SentenceTransformerRerank``),
                applied before neighbours and frames are attached.
            languages: Only moments said in these languages, as :meth:`search` takes
                them; None: any.
            speakers: Only what these speakers said, as :meth:`search` takes them.
            by_named_speaker: A question naming one of the index's speakers as the one
                speaking is answered from what that speaker said, as :meth:`search`'s.
        """
        self.check_store()
        options = options or AskOptions()
        postprocessors = [p for p in (reranker, self.postprocessor()) if p is not None]
        policy = self.search_policy()
        return VideoAnswerer(
            retriever=NodeRetriever(
                self._retriever(
                    policy,
                    top_k=options.top_k,
                    languages=spoken_in(languages),
                    speakers=speakers,
                    by_named_speaker=by_named_speaker,
                )
            ),
            postprocessors=postprocessors,
            llm=llm if llm is not None else _settings_llm(),
            options=options,
            reading=folder_lease(self.path).shared,
            **policy.wiring(),
        )

    def ask(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        options: AskOptions | None = None,
        reranker: BaseNodePostprocessor | None = None,
        languages: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        by_named_speaker: bool = False,
    ) -> Answer:
        """Answer ``question`` with citations; extractive without an LLM.

        Returns "not found in the index" without calling the model when nothing
        relevant is retrieved. ``languages``, ``speakers`` and ``by_named_speaker``: only
        moments said in these languages, by these speakers, or by a speaker the question
        names (as :meth:`search` takes them). The folder is read (:meth:`_prompt`) before
        the model is called, and not while it answers.
        """
        return self._prompt(
            question,
            llm=llm,
            options=options,
            reranker=reranker,
            languages=languages,
            speakers=speakers,
            by_named_speaker=by_named_speaker,
        ).answer()

    async def aask(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        options: AskOptions | None = None,
        reranker: BaseNodePostprocessor | None = None,
        languages: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        by_named_speaker: bool = False,
    ) -> Answer:
        """Async :meth:`ask`: the same answer, the folder read in a worker thread and the
        model called through its async API."""
        prompt = await asyncio.to_thread(
            partial(
                self._prompt,
                question,
                llm=llm,
                options=options,
                reranker=reranker,
                languages=languages,
                speakers=speakers,
                by_named_speaker=by_named_speaker,
            )
        )
        return await prompt.aanswer()

    def _prompt(self, question: str, **answering: Any) -> Prompt:
        """What the model is asked for ``question``, made in one read of the folder
        (:meth:`_reading`, in the calling thread): the version followed and held, the
        answerer (:meth:`answerer`'s arguments ``answering``) made on it, the moments
        retrieved and the frames and clips shown read. A writer's commit step that ends
        meanwhile sends the read round again; one that begins waits for it, never for
        the model, which is called after, from the prompt alone."""
        with self._reading():
            return self.answerer(**answering).prompt(question)

    def as_query_engine(
        self,
        *,
        llm: LLM | None = None,
        streaming: bool = False,
        options: AskOptions | None = None,
        reranker: BaseNodePostprocessor | None = None,
    ) -> VideoQueryEngine:
        """This index as a LlamaIndex query engine answering as :meth:`ask` does.

        ``response.metadata["answer"]`` is the checked :class:`Answer` (its citations
        are moments that were retrieved), ``response.source_nodes`` the moments with
        their frames. ``streaming=True`` returns ``StreamingResponse``s. The arguments
        are :meth:`answerer`'s.
        """
        return _FollowingQueryEngine(
            self, lambda: self.answerer(llm=llm, options=options, reranker=reranker), streaming
        )

    def _contents(self, sources: Sequence[str | Path] | None) -> list[str] | None:
        """The content hashes of the recordings ``sources`` names; None for every file."""
        if not sources:
            return None
        named = [sources] if isinstance(sources, str | Path) else sources
        return sorted({self.recording(source).content_hash for source in named})

    def locate(self, content_hash: str, stored_source: str) -> str:
        """Where an indexed content is now: its stored path if still there, else a live one."""
        return self.where(content_hash, stored_source).source

    def where(self, content_hash: str, stored_source: str) -> Location:
        """Where an indexed content is now: the path as it was given (its stored one if
        still there, else a live one) and that file's absolute path, which resolves from
        any working directory (the last known one if no path of the content is left)."""
        return located(self.manifest, content_hash, stored_source)


def spoken_in(languages: Sequence[str] | None) -> list[str] | None:
    """``languages`` as written (``FR``, ``fr-FR``, ``French``) as the codes moments
    carry (:func:`~llama_index_video.transcription.language.language_code`); None: any."""
    return [language_code(given) for given in languages] if languages else None


def _settings_llm() -> LLM | None:
    """LlamaIndex's ``Settings.llm`` if the app set one; None otherwise.

    Reading ``Settings.llm`` unset would build OpenAI's default model (and fail without
    its package and key), so only an LLM the app chose counts.
    """
    return Settings._llm


class _Version:
    """What a retriever made now reads: the vectors an index has loaded, and the contents
    of the version read that its vector queries keep to (see ``SearchPolicy.version``);
    one made for another must be made again."""

    def __init__(self, index: Querying) -> None:
        self.index = index.index
        self.contents = index._version_contents()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Version)
            and self.index is other.index
            and self.contents == other.contents
        )

    __hash__ = None  # type: ignore[assignment]


class _Following:
    """:meth:`Querying.as_retriever`'s retriever: ``make()``'s, made again whenever the
    index has loaded its vectors afresh (another process's writer finished), so that a
    retriever an app keeps finds what was ingested since, and never queries the vectors
    the reload dropped, or moved to another version's contents (:class:`_Version`). What
    the retriever shows (``channels``, ``top_k``) shows through."""

    def __init__(self, index: Querying, make: Callable[[], Retriever]) -> None:
        self._index = index
        self._make = make
        self._made_for = _Version(index)
        self._retriever = make()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._current(), name)

    def retrieve(self, query: Any) -> Sequence[Any]:
        with self._index._reading():
            return self._current().retrieve(query)

    async def aretrieve(self, query: Any) -> Sequence[Any]:
        """:meth:`retrieve` in a worker thread, which holds the folder's lease as it
        reads (a lease is a thread's: coroutines of one event loop share a thread)."""
        return await asyncio.to_thread(self.retrieve, query)

    def _current(self) -> Retriever:
        self._index._follow_writers()
        now = _Version(self._index)
        if now != self._made_for:
            self._made_for, self._retriever = now, self._make()
        return self._retriever


class _FollowingQueryEngine(VideoQueryEngine):
    """:meth:`Querying.as_query_engine`'s engine: its answerer made again whenever the
    index has loaded its vectors afresh (see :class:`_Following`)."""

    def __init__(self, index: Querying, make: Callable[[], VideoAnswerer], streaming: bool) -> None:
        self._index = index
        self._make = make
        self._made_for = _Version(index)
        super().__init__(make(), streaming=streaming)

    def _prompt(self, question: str) -> Prompt:
        """Made in one read of the index (as :meth:`Querying._prompt`'s), by an answerer
        on the version it holds; the model is called after."""
        with self._index._reading():
            now = _Version(self._index)
            if now != self._made_for:
                self._made_for, self.answerer = now, self._make()
            return super()._prompt(question)
