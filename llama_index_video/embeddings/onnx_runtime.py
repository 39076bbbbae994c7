"""ONNX Runtime under the local sentence models, without LlamaIndex: loading a model
folder (tokenizer, session, the optimized copy), and embedding texts with it.

:class:`SentenceEncoder` is what a process that only embeds a query uses (the command
line's one-shot ``search``, :mod:`llama_index_video.search.one_shot`);
:class:`~llama_index_video.embeddings.onnx.OnnxSentenceEmbedding`, the LlamaIndex
embedding, embeds through the same :func:`embed_texts`, so both give the same vectors.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

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
PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
SPINNING = "session.intra_op.allow_spinning"


class SentenceEncoder:
    """Mean-pooled, normalised sentence vectors of an ONNX model folder, loaded on first use.

    Args:
        folder: The model folder (``onnx/model.onnx``, ``tokenizer.json``,
            ``sentence_bert_config.json``).
        device: ``"cpu"`` or ``"cuda"``.
        batch_size: Texts per forward pass.
        threads: ONNX Runtime's intra-op threads; None: one per core.

    Raises:
        EmbeddingError: ``folder`` lacks one of the files.
    """

    def __init__(
        self,
        folder: Path,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        self.folder = folder
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        self.max_length = max_length(folder)
        self._loaded: tuple[Any, Any] | None = None

    def get_query_embedding(self, query: str) -> list[float]:
        """The vector of ``query`` (named as LlamaIndex's embeddings name it)."""
        return self.embed([query])[0]

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        if self._loaded is None:
            self._loaded = (
                load_session(self.folder / ONNX_FILE, self.device, self.threads),
                load_tokenizer(self.folder / TOKENIZER_FILE, self.max_length),
            )
        session, tokenizer = self._loaded
        return embed_texts(session, tokenizer, texts, batch_size=self.batch_size)


def max_length(folder: Path) -> int:
    """The tokens a model folder's model reads per text (sentence-transformers'
    ``max_seq_length``, 256 when not said).

    Raises:
        EmbeddingError: ``folder`` is not an ONNX sentence-transformers model folder.
    """
    missing = [name for name in (ONNX_FILE, TOKENIZER_FILE) if not (folder / name).is_file()]
    if missing:
        raise EmbeddingError(
            f"{folder} is not an ONNX sentence-transformers model folder (no "
            f"{' or '.join(missing)}); pass a folder laid out as the model's Hub repository"
        )
    config = folder / SBERT_CONFIG
    settings = json.loads(config.read_text()) if config.is_file() else {}
    return int(settings.get("max_seq_length", 256))


TOKENS_PER_RUN = 1024
"""Padded tokens (texts × the longest one's tokens) in one run of the model. ONNX
Runtime's memory arena keeps what its largest run needed for the rest of the process:
runs of 32 texts of 256 tokens held 1,517 MB, runs of at most 1,024 tokens (4 such
texts; 32 of 32 tokens) 331 MB, for less CPU (docs/benchmarks.md)."""


def embed_texts(
    session: Any, tokenizer: Any, texts: list[str], *, batch_size: int
) -> list[list[float]]:
    """The vectors of ``texts`` through a loaded session and tokenizer, in the texts' order.

    The texts run shortest first, in runs of at most ``batch_size`` texts and
    :data:`TOKENS_PER_RUN` padded tokens, each padded only to its own longest text.
    """
    names = {item.name for item in session.get_inputs()}
    encodings = tokenizer.encode_batch(texts)
    inputs = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    lengths = inputs["attention_mask"].sum(axis=1)
    vectors: list[list[float]] = [[] for _ in texts]
    for run in runs(lengths.tolist(), batch_size=batch_size):
        longest = int(lengths[run].max())
        feeds = {name: array[run, :longest] for name, array in inputs.items() if name in names}
        hidden = session.run(None, feeds)[0]
        pooled = mean_pooled_unit_vectors(hidden, feeds["attention_mask"]).tolist()
        for index, vector in zip(run, pooled, strict=True):
            vectors[index] = vector
    return vectors


def runs(lengths: list[int], *, batch_size: int) -> list[list[int]]:
    """The indexes of texts of ``lengths`` tokens, shortest first, cut into runs of at most
    ``batch_size`` texts and :data:`TOKENS_PER_RUN` padded tokens (a longer text alone)."""
    cut: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        run = cut[-1] if cut else []
        if run and len(run) < batch_size and (len(run) + 1) * lengths[index] <= TOKENS_PER_RUN:
            run.append(index)
        else:
            cut.append([index])
    return cut


def mean_pooled_unit_vectors(hidden: NDArray[Any], mask: NDArray[Any]) -> NDArray[np.float32]:
    """Mean pooling and ``Normalize`` as in sentence-transformers; one row per text."""
    weights = mask[..., None].astype(np.float32)
    means = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    return (means / np.clip(norms, 1e-12, None)).astype(np.float32)


def load_tokenizer(path: Path, max_length: int) -> Any:
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


def check_threads(threads: int | None) -> None:
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1 (or None for one per core), got {threads}")


def load_session(path: Path, device: str, threads: int | None) -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise MissingDependencyError("onnxruntime", "local", "The local embedding model") from exc
    try:
        if device == "cpu":
            return _cpu_session(onnxruntime, path, threads)
        return onnxruntime.InferenceSession(
            str(path), _session_options(onnxruntime, threads), providers=[PROVIDERS[device]]
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
        return onnxruntime.InferenceSession(str(model), options, providers=[PROVIDERS["cpu"]])

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
