"""Answering a question: retrieve, rerank, attach context, generate, check the citations.

The pipeline is LlamaIndex's own pieces in order: a retriever (optionally several
phrasings of the question fused by ``QueryFusionRetriever``), node postprocessors (a
reranker, then ``TimestampFramePostprocessor``), and a chat LLM that receives each
moment under its ``[file mm:ss-mm:ss]`` label with its frame as an image. What the
model cites is checked against what was retrieved: an invented label is flagged (or
stripped), never turned into a citation. With no model configured the answer is
extractive, from the hits the relevance gate lets through. With a model, the model
decides: it is skipped only when the gate is sure nothing answers (a
``ConfidenceGate``'s ``sure`` bar, under which about 1 % of answerable questions
fall); otherwise it gets the hits and is told to say when they do not answer, and
that reply is the same "not found" (``found: false``, with the reason).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from llama_index.core.llms import LLM, ChatMessage
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore

from llama_index_video.answering.citations import check_citations
from llama_index_video.answering.extractive import extractive_answer
from llama_index_video.answering.not_found import (
    MODEL_NOT_FOUND,
    NO_ANSWER,
    NOT_FOUND_ANSWER,
    not_found_answer,
)
from llama_index_video.answering.prompts import ContextItem, build_messages
from llama_index_video.errors import AnswerError, MissingDependencyError
from llama_index_video.results import Answer, Citation, SearchHit
from llama_index_video.search.relevance import Calibration, Gate, Vocabulary
from llama_index_video.search.searcher import Locate, Recording, VideoSearcher

logger = logging.getLogger(__name__)

LlmChoice = Literal["auto", "claude", "gemini", "none"]
NO_ANSWER_TEXT = "The model returned no answer (empty or blocked); see the moments below."
MODEL_NOT_FOUND_REASON = "the model read the moments found and said they do not answer it"
NO_ANSWER_REASON = "the model returned no answer (empty or blocked)"


@dataclass(frozen=True, kw_only=True)
class AskOptions:
    """How a question is answered.

    Attributes:
        top_k: Moments retrieved (before merging neighbours).
        num_queries: Phrasings searched; above 1 the LLM writes the extra ones and
            the results are fused by reciprocal rank (needs an LLM).
        max_images: Most frames sent to the model.
        max_clips: Most retrieved video or audio clips sent to the model (Gemini
            watches them; others leave them out).
        unverified: What to do with a cited label that matches nothing retrieved:
            ``"flag"`` it in the text, ``"strip"`` it, or ``"keep"`` it as written
            (it is never a citation either way).
    """

    top_k: int = 5
    num_queries: int = 1
    max_images: int = 8
    max_clips: int = 1
    unverified: Literal["flag", "strip", "keep"] = "flag"

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 100:
            raise ValueError(f"top_k must be within 1..100, got {self.top_k}")
        if not 1 <= self.num_queries <= 10:
            raise ValueError(f"num_queries must be within 1..10, got {self.num_queries}")
        if self.max_images < 0:
            raise ValueError(f"max_images must be >= 0, got {self.max_images}")


class VideoAnswerer:
    """Answers questions over a retriever, citing moments to the second.

    Args:
        retriever: Any LlamaIndex retriever over this package's nodes.
        postprocessors: Applied in order after retrieval, e.g. a reranker and then
            ``TimestampFramePostprocessor``.
        llm: A chat LLM that accepts text and image blocks (``ClaudeMultimodalLLM``,
            ``GeminiMultimodalLLM`` or any LlamaIndex multimodal LLM); None answers
            extractively.
        options: See :class:`AskOptions`.
        locate: Maps ``(content_hash, stored source)`` to where the file is now.
        relevance: Rejects questions the hits do not answer (see
            :class:`~llama_index_video.search.searcher.VideoSearcher`).
        recording: The query's candidates in its best recording, for a gate on
            ``standout`` (see the same).
        calibration: Gives each hit its ``confidence`` (see the same).
        vocabulary: The words of the whole index, for the confidence (see the same).
        query: Makes of a question the query ``retriever`` takes (see the same).
        reading: Held around each retrieval, its post-processing and the reading of the
            frames and clips shown to the model, in the thread that does them, never
            through the model's call (a ``VideoIndex`` passes its folder's read lease, so
            that no other thread moves it to a new version meanwhile); None: nothing is
            held.
    """

    def __init__(
        self,
        *,
        retriever: BaseRetriever,
        postprocessors: Sequence[BaseNodePostprocessor] = (),
        llm: LLM | None = None,
        options: AskOptions | None = None,
        locate: Locate | None = None,
        relevance: Gate | None = None,
        recording: Recording | None = None,
        calibration: Calibration | None = None,
        vocabulary: Callable[[], Vocabulary | None] | None = None,
        query: Callable[[str], Any] | None = None,
        reading: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> None:
        self.options = options or AskOptions()
        self._reading = reading or nullcontext
        if self.options.num_queries > 1:
            if llm is None:
                raise ValueError("num_queries > 1 needs an LLM to write the extra phrasings")
            from llama_index.core.retrievers import QueryFusionRetriever
            from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

            retriever = QueryFusionRetriever(
                [retriever],
                llm=llm,
                num_queries=self.options.num_queries,
                mode=FUSION_MODES.RECIPROCAL_RANK,
                similarity_top_k=self.options.top_k,
                use_async=False,
            )
        self.searcher = VideoSearcher(
            retriever=retriever,
            postprocessors=postprocessors,
            locate=locate,
            relevance=relevance,
            recording=recording,
            calibration=calibration,
            vocabulary=vocabulary,
            query=query,
        )
        self.llm = llm

    def retrieve(self, question: str) -> list[NodeWithScore]:
        """The moments for ``question``, post-processed, most relevant first."""
        return self.searcher.retrieve(question)

    def search(self, question: str) -> list[SearchHit]:
        """The moments as search hits (the ``search --json`` contract)."""
        return self.searcher.search(question)

    def ask(self, question: str) -> Answer:
        """Answer ``question`` (see the module docstring for the rules)."""
        return self.prompt(question).answer()

    async def aask(self, question: str) -> Answer:
        """Async :meth:`ask`: the same answer; the retrieval runs in a worker thread."""
        return await (await asyncio.to_thread(self.prompt, question)).aanswer()

    def stream(self, question: str, *, streaming: bool = True) -> AnswerStream:
        """Answer ``question``, yielding the text as the model writes it.

        Iterate the returned :class:`AnswerStream` for text deltas; its ``answer`` holds
        the checked :class:`Answer` once the iteration is over.
        """
        return self.prompt(question).stream(streaming=streaming)

    async def astream(self, question: str, *, streaming: bool = True) -> AsyncAnswerStream:
        """Async :meth:`stream`: the same deltas and answer, through the LLM's async API.

        The retrieval (a local vector store and files) runs in a worker thread, so the
        event loop is never blocked.
        """
        return await (await asyncio.to_thread(self.prompt, question)).astream(streaming=streaming)

    def prompt(self, question: str) -> Prompt:
        """What to send the model for ``question`` and how its reply becomes an Answer
        (no model: the extractive answer, when nothing relevant was found or none is set).

        The moments are retrieved, and the frames and clips the messages show read into
        them, inside ``reading``; the model is called after, from the prompt alone, so a
        reader holds nothing while the model answers.
        """
        if not question.strip():
            raise AnswerError("the question is empty")
        with self._reading():
            found = self.searcher.findings(question, lenient=self.llm is not None)
            hits = [finding.hit for finding in found]
            nodes = [finding.node for finding in found]
            if not found or self.llm is None:
                answer = extractive_answer(question, hits)
                return Prompt(None, [], lambda _text: answer, nodes)
            # The model is shown each hit's own citation, and its answer is checked
            # against those and their context units: one source for both.
            items = [ContextItem.from_node(m.node.node, citation=m.hit.citation) for m in found]
            messages = build_messages(
                question,
                items,
                max_images=self.options.max_images,
                max_clips=self.options.max_clips,
            )
        retrieved = [citation for hit in hits for citation in hit.citations()]

        def finish(text: str) -> Answer:
            return self._checked(question, text, retrieved, hits)

        return Prompt(self.llm, messages, finish, nodes)

    def _checked(
        self, question: str, text: str, retrieved: list[Citation], hits: list[SearchHit]
    ) -> Answer:
        model = self.llm.metadata.model_name if self.llm is not None else None
        if not text.strip():
            return Answer(
                question,
                NO_ANSWER_TEXT,
                hits=hits,
                found=False,
                model=model,
                reason=NO_ANSWER_REASON,
                reason_code=NO_ANSWER,
            )
        said = not_found_answer(question)
        if said in text or NOT_FOUND_ANSWER in text:  # told to say `said`, some say English
            return Answer(
                question,
                text.strip().replace(NOT_FOUND_ANSWER, said),
                hits=hits,
                found=False,
                model=model,
                reason=MODEL_NOT_FOUND_REASON,
                reason_code=MODEL_NOT_FOUND,
            )
        checked = check_citations(text, retrieved)
        final = {
            "flag": checked.flag_unverified,
            "strip": checked.strip_unverified,
            "keep": lambda: checked.text,
        }[self.options.unverified]()
        if checked.unverified:
            logger.warning(
                "the answer cites moments that were not retrieved: %s", checked.unverified
            )
        return Answer(
            question,
            final.strip(),
            citations=list(checked.citations),
            hits=hits,
            model=model,
            unverified=list(checked.unverified),
        )


@dataclass(frozen=True)
class Prompt:
    """The messages for the model, ``finish`` (its reply's text to a checked Answer) and
    the moments retrieved; no model: ``finish`` gives the extractive answer. Made by
    :meth:`VideoAnswerer.prompt`; it reads no index: the model is asked from it alone."""

    llm: LLM | None
    messages: list[ChatMessage]
    finish: Callable[[str], Answer]
    nodes: list[NodeWithScore]

    def answer(self) -> Answer:
        """Ask the model (if any) and check its answer."""
        stream = self.stream(streaming=False)
        for _ in stream:
            pass
        return stream.answer

    async def aanswer(self) -> Answer:
        """Async :meth:`answer`, through the LLM's async API."""
        stream = await self.astream(streaming=False)
        async for _ in stream:
            pass
        return stream.answer

    def stream(self, *, streaming: bool = True) -> AnswerStream:
        """The answer's text deltas as the model writes them (one, unless ``streaming``)."""
        if self.llm is None:
            return AnswerStream(iter([self.finish("").text]), self.finish, self.nodes)
        if not streaming:
            reply = self.llm.chat(self.messages).message.content or ""
            return AnswerStream(iter([reply]), self.finish, self.nodes)
        deltas = (chunk.delta for chunk in self.llm.stream_chat(self.messages) if chunk.delta)
        return AnswerStream(deltas, self.finish, self.nodes)

    async def astream(self, *, streaming: bool = True) -> AsyncAnswerStream:
        """Async :meth:`stream`, through the LLM's async API."""
        if self.llm is None:
            return AsyncAnswerStream(_one(self.finish("").text), self.finish, self.nodes)
        if not streaming:
            reply = (await self.llm.achat(self.messages)).message.content or ""
            return AsyncAnswerStream(_one(reply), self.finish, self.nodes)
        chunks = await self.llm.astream_chat(self.messages)
        deltas = (c.delta async for c in chunks if c.delta)
        return AsyncAnswerStream(deltas, self.finish, self.nodes)


async def _one(text: str) -> AsyncIterator[str]:
    yield text


class AnswerStream:
    """Text deltas of an answer; ``answer`` is set when the iteration ends.

    ``nodes`` are the moments the answer was written from (``MomentNode``s with their
    context and frames), most relevant first.
    """

    def __init__(
        self,
        deltas: Iterator[str],
        finish: Callable[[str], Answer],
        nodes: Sequence[NodeWithScore] = (),
    ) -> None:
        self.nodes = list(nodes)
        self._deltas = deltas
        self._finish = finish
        self._answer: Answer | None = None

    def __iter__(self) -> Iterator[str]:
        parts: list[str] = []
        for delta in self._deltas:
            parts.append(delta)
            yield delta
        self._answer = self._finish("".join(parts))

    @property
    def answer(self) -> Answer:
        if self._answer is None:
            raise AnswerError("the answer is complete only after the stream is read to the end")
        return self._answer


class AsyncAnswerStream(AnswerStream):
    """:class:`AnswerStream` read with ``async for``."""

    def __init__(
        self,
        deltas: AsyncIterator[str],
        finish: Callable[[str], Answer],
        nodes: Sequence[NodeWithScore] = (),
    ) -> None:
        super().__init__(iter(()), finish, nodes)
        self._async_deltas = deltas

    async def __aiter__(self) -> AsyncIterator[str]:
        parts: list[str] = []
        async for delta in self._async_deltas:
            parts.append(delta)
            yield delta
        self._answer = self._finish("".join(parts))


def make_llm(choice: LlmChoice = "auto", *, model: str | None = None) -> LLM | None:
    """The LLM for a CLI/service choice; ``"auto"`` picks by the API keys present.

    Raises:
        AnswerError: the chosen model has no API key configured.
    """
    if choice == "auto":
        if os.environ.get("ANTHROPIC_API_KEY"):
            choice = "claude"
        elif os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"):
            choice = "gemini"
        else:
            return None
    if choice == "none":
        return None
    settings = {"model": model} if model else {}
    if choice == "claude":
        from llama_index_video.answering.claude import ClaudeMultimodalLLM

        return ClaudeMultimodalLLM(**settings)
    from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM

    return GeminiMultimodalLLM(**settings)


def make_reranker(model: str, *, top_n: int) -> BaseNodePostprocessor:
    """A cross-encoder reranker (``ask --rerank MODEL``), keeping the ``top_n`` best moments.

    ``model`` is a sentence-transformers cross-encoder name (downloaded on first use) or
    a local folder. It runs on torch, which the default install leaves out.

    Raises:
        MissingDependencyError: sentence-transformers (the extra of that name) is missing.
        AnswerError: the model cannot be loaded (no such model, or a name offline).
    """
    from llama_index.core.postprocessor import SentenceTransformerRerank

    try:
        return SentenceTransformerRerank(model=model, top_n=top_n)
    except ImportError as exc:
        raise MissingDependencyError(
            "sentence-transformers", "sentence-transformers", f"Reranking with {model}"
        ) from exc
    except Exception as exc:  # sentence-transformers raises OSError, ValueError, HTTP errors
        raise AnswerError(
            f"reranker '{model}' cannot be loaded ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); offline, pass a local model folder"
        ) from exc
