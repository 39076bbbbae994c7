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
below are ours.

On CPU, the first load of a model saves ONNX Runtime's optimized graph of it under the
model cache (:func:`optimized_copy`), and later processes load that copy: a cold
``search`` then holds a fraction of the memory (see ``_cpu_session``).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseComponent

from llama_index_video.embeddings.threaded import ThreadedEmbedding
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import (
    CACHE_ENV,
    ONNX_FILE,
    SBERT_CONFIG,
    derived_copy_digest,
    model_cache_dir,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

TOKENIZER_FILE = "tokenizer.json"
OPTIMIZED_FOLDER = "onnx-optimized"
OPTIMIZED_MODEL = "model.onnx"
OPTIMIZED_WEIGHTS = "model.onnx.data"
EXTERNAL_WEIGHTS = "session.optimized_model_external_initializers_file_name"
EXTERNAL_WEIGHTS_MIN_BYTES = "session.optimized_model_external_initializers_min_size_in_bytes"
_PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
SPINNING = "session.intra_op.allow_spinning"


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
        if device not in _PROVIDERS:
            raise ValueError(f"device must be one of {', '.join(_PROVIDERS)}, got {device!r}")
        _check_threads(threads)
        root = Path(folder)
        missing = [name for name in (ONNX_FILE, TOKENIZER_FILE) if not (root / name).is_file()]
        if missing:
            raise EmbeddingError(
                f"{root} is not an ONNX sentence-transformers model folder (no "
                f"{' or '.join(missing)}); pass a folder laid out as the model's Hub repository"
            )
        config = root / SBERT_CONFIG
        settings = json.loads(config.read_text()) if config.is_file() else {}
        fields: dict[str, Any] = {
            "model_name": model_name,
            "folder": str(root),
            "device": device,
            "max_length": int(settings.get("max_seq_length", 256)),
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
        vectors: list[list[float]] = []
        names = {item.name for item in session.get_inputs()}
        for start in range(0, len(texts), self.embed_batch_size):
            encodings = tokenizer.encode_batch(texts[start : start + self.embed_batch_size])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
            hidden = session.run(None, feeds)[0]
            vectors.extend(mean_pooled_unit_vectors(hidden, mask).tolist())
        return vectors

    def use_threads(self, threads: int | None) -> None:
        """Run on ``threads`` intra-op threads from now on (``None``: one per core).

        ONNX Runtime fixes a session's threads when it creates it, so a loaded session
        is created again here, before this returns; an unloaded one loads with them.
        """
        _check_threads(threads)
        with self._load_lock:
            self.threads = threads
            if self._session is not None:
                self._session = _load_session(
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
                self._tokenizer = _load_tokenizer(
                    Path(self.folder) / TOKENIZER_FILE, self.max_length
                )
                self._session = _load_session(
                    Path(self.folder) / ONNX_FILE, self.device, self.threads
                )
        return self._session, self._tokenizer


def mean_pooled_unit_vectors(hidden: NDArray[Any], mask: NDArray[Any]) -> NDArray[np.float32]:
    """Mean pooling and ``Normalize`` as in sentence-transformers; one row per text."""
    weights = mask[..., None].astype(np.float32)
    means = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    return (means / np.clip(norms, 1e-12, None)).astype(np.float32)


def _load_tokenizer(path: Path, max_length: int) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MissingDependencyError("tokenizers", "local", "The local embedding model") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for a malformed file
        raise EmbeddingError(f"{path}: not a readable tokenizer ({exc})") from exc
    padding = tokenizer.padding or {}
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(
        pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]")
    )  # to the longest text of each batch, not the file's fixed length
    return tokenizer


def _check_threads(threads: int | None) -> None:
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1 (or None for one per core), got {threads}")


def _load_session(path: Path, device: str, threads: int | None) -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise MissingDependencyError("onnxruntime", "local", "The local embedding model") from exc
    try:
        if device == "cpu":
            return _cpu_session(onnxruntime, path, threads)
        return onnxruntime.InferenceSession(
            str(path), _session_options(onnxruntime, threads), providers=[_PROVIDERS[device]]
        )
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
        raise EmbeddingError(f"{path}: ONNX Runtime cannot load it ({exc})") from exc


def optimized_copy(path: Path, runtime_version: str) -> Path:
    """The folder of the optimized copy of the ONNX file ``path`` for this ONNX Runtime.

    Named after the model folder and a digest of the file's path, size and time, the
    runtime's version and the machine's architecture: a changed file or another runtime
    gets a copy of its own (older copies stay until the cache is cleared).
    """
    digest = derived_copy_digest(path, runtime_version, platform.machine())
    return model_cache_dir() / OPTIMIZED_FOLDER / f"{path.parent.parent.name}-{digest}"


def _cpu_session(onnxruntime: Any, path: Path, threads: int | None) -> Any:
    """A CPU session of ``path``, from its optimized copy (made by the first load).

    ONNX Runtime optimizes a graph each time it loads it: for the int8 export, whose
    weights are int8 tensors turned into float by Cast and Mul nodes, constant folding
    makes 90 MB of float weights on every load, with a transient peak above 200 MB.
    Its optimized graph, saved with the weights in a separate file, loads with that file
    memory-mapped, unchanged: pages are read when used, so the 47 MB word-embedding
    table costs only the rows a text looks up (one ``search``: +80 MB peak instead of
    +215 MB, and a faster load). The vectors are the same to the bit: it is the very
    graph the runtime would have run. Extended rather than all optimizations are saved,
    as ONNX Runtime advises for a file that may be read on another CPU; loading it
    applies the rest.
    """

    def session(model: Path, options: Any = None) -> Any:
        options = options or _session_options(onnxruntime, threads)
        return onnxruntime.InferenceSession(str(model), options, providers=[_PROVIDERS["cpu"]])

    copy = optimized_copy(path, onnxruntime.__version__)
    if (copy / OPTIMIZED_MODEL).is_file():  # complete: the folder is renamed into place
        try:
            return session(copy / OPTIMIZED_MODEL)
        except Exception as exc:  # damaged since: made again below from the original
            logger.warning("%s cannot be loaded (%s); optimizing %s again", copy, exc, path)
            shutil.rmtree(copy, ignore_errors=True)
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=copy.parent))
    except OSError as exc:
        logger.info("%s not optimized once for all (%s); see %s", path, exc, CACHE_ENV)
        return session(path)
    options = _session_options(onnxruntime, threads)
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(partial / OPTIMIZED_MODEL)
    options.add_session_config_entry(EXTERNAL_WEIGHTS, OPTIMIZED_WEIGHTS)
    options.add_session_config_entry(EXTERNAL_WEIGHTS_MIN_BYTES, "1024")
    try:
        saving = session(path, options)
    except Exception as exc:  # writing the copy failed (disk full, ...) or the model is bad
        shutil.rmtree(partial, ignore_errors=True)
        logger.info("%s: no optimized copy (%s)", path, exc)
        return session(path)  # a bad model fails here, as it would without a copy
    try:
        os.replace(partial, copy)
    except OSError:  # another process has just put its copy there
        shutil.rmtree(partial, ignore_errors=True)
    return saving


def _session_options(onnxruntime: Any, threads: int | None) -> Any:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # the int8 export's unused initialisers are no news
    if threads is not None:
        options.intra_op_num_threads = threads
    # ORT's pool threads otherwise spin for a while after each call, taking the core from
    # what runs next (retrieval after a query, ASR beside ingest). Measured on two shared
    # cores: a query followed by 20 ms of Python 57 ms p50 spinning, 33 ms not; a batch
    # of 32 886 ms spinning, 688 ms not (docs/benchmarks.md).
    options.add_session_config_entry(SPINNING, "0")
    return options
