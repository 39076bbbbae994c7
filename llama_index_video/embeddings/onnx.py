"""A sentence-transformers text model run on ONNX Runtime: no torch, no transformers.

:class:`OnnxSentenceEmbedding` gives the vectors sentence-transformers gives for a
mean-pooling model (all-MiniLM-L6-v2 and its kin): the tokenizer truncates at the
model's ``max_seq_length`` (``sentence_bert_config.json``; 256 for MiniLM, not the 512
or 128 its ``tokenizer.json`` carries), the token vectors of ``last_hidden_state`` are
averaged over the attention mask, and the mean is L2-normalised.

A model folder is laid out as the model's Hub repository is: ``onnx/model.onnx``,
``tokenizer.json`` and ``sentence_bert_config.json``. ``fastembed`` runs the same models
on ONNX but costs 2-4 s of imports per process (it loads its image, sparse and
late-interaction models too) and truncates at the tokenizer's 512, so the few lines
below are ours. Loading and running the model is :mod:`.onnx_runtime`'s (which a
process that only embeds a query uses without LlamaIndex).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseComponent

from llama_index_video.embeddings.onnx_runtime import (
    PROVIDERS,
    TOKENIZER_FILE,
    check_threads,
    embed_texts,
    load_session,
    load_tokenizer,
    max_length,
)
from llama_index_video.embeddings.threaded import ThreadedEmbedding
from llama_index_video.weights import ONNX_FILE


class OnnxSentenceEmbedding(ThreadedEmbedding):
    """Mean-pooled, normalised sentence vectors from an ONNX export, batched.

    The session and tokenizer load on first use and are shared by the threads that
    embed through this object.

    Args:
        model_name: The model's name (what the index records), e.g.
            ``sentence-transformers/all-MiniLM-L6-v2``.
        folder: The model folder (``onnx/model.onnx``, ``tokenizer.json``,
            ``sentence_bert_config.json``).
        device: ``"cpu"`` or ``"cuda"`` (needs ``onnxruntime-gpu``).
        embed_batch_size: Texts per forward pass.
        threads: ONNX Runtime's intra-op threads; ``None`` lets it choose (one per
            core). One thread suits many short queries embedded concurrently (see
            :meth:`use_threads`).

    Raises:
        EmbeddingError: ``folder`` lacks one of the files.
    """

    folder: str = Field(description="Model folder laid out as the model's Hub repository.")
    device: str = Field(default="cpu", description="cpu or cuda.")
    max_length: int = Field(
        description="Tokens kept per text (sentence-transformers' max_seq_length)."
    )
    threads: int | None = Field(
        default=None, description="ONNX Runtime intra-op threads; None: one per core."
    )
    _session: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(
        self,
        *,
        model_name: str,
        folder: str | Path,
        device: str = "cpu",
        embed_batch_size: int = 32,
        threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        if device not in PROVIDERS:
            raise ValueError(f"device must be one of {', '.join(PROVIDERS)}, got {device!r}")
        check_threads(threads)
        root = Path(folder)
        fields: dict[str, Any] = {
            "model_name": model_name,
            "folder": str(root),
            "device": device,
            "max_length": max_length(root),
            "embed_batch_size": embed_batch_size,
            "threads": threads,
        }
        super().__init__(**fields, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "OnnxSentenceEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        session, tokenizer = self._loaded()
        return embed_texts(session, tokenizer, texts, batch_size=self.embed_batch_size)

    def use_threads(self, threads: int | None) -> None:
        """Run on ``threads`` intra-op threads from now on (``None``: one per core).

        ONNX Runtime fixes a session's threads when it creates it, so a loaded session
        is created again here, before this returns; an unloaded one loads with them.
        """
        check_threads(threads)
        with self._load_lock:
            self.threads = threads
            if self._session is not None:
                self._session = load_session(
                    Path(self.folder) / ONNX_FILE, self.device, self.threads
                )

    def __getstate__(self) -> dict[str, Any]:
        # Ray ships the model to its workers by pickling it. The ONNX session and the lock
        # do not pickle, so a copy travels unloaded and loads on first use (pydantic's own
        # state: LlamaIndex's would log a warning for each attribute replaced here).
        state = super(BaseComponent, self).__getstate__()
        state["__pydantic_private__"] = {"_session": None, "_tokenizer": None}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._load_lock = threading.Lock()

    def _loaded(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._session is None:
                self._tokenizer = load_tokenizer(
                    Path(self.folder) / TOKENIZER_FILE, self.max_length
                )
                self._session = load_session(
                    Path(self.folder) / ONNX_FILE, self.device, self.threads
                )
        return self._session, self._tokenizer
