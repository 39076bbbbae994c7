"""SentencePiece models as ``tokenizers`` files: the same token ids, loaded in Rust.

The Universal Sentence Encoder's package tokenizes in pure Python, which takes 2 s to
load the model's 128,000 pieces in each process. :func:`fast_tokenizer` converts the
model once into a ``tokenizers`` file under
:func:`~llama_index_video.weights.model_cache_dir` that loads in a quarter of the time;
:class:`SentencePieceIds` gives the ids SentencePiece gives (compared in
``tests/embeddings/test_multilingual.py``).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Final

from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import (
    assemble_model_folder,
    derived_copy_digest,
    model_cache_dir,
)

TOKENIZER_FILE: Final = "tokenizer.json"
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
_PURPOSE = "The multilingual text embedding"


class SentencePieceIds:
    """Token ids as the package's tokenizer gives them, from the converted Rust tokenizer.

    The package's encoder calls ``encode(text, out_type=int, add_bos=True, add_eos=True)``.
    """

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError("tokenizers", "multilingual", _PURPOSE) from exc
        self._tokenizer = Tokenizer.from_file(str(path))

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        if out_type is not int or not (add_bos and add_eos):
            raise ValueError("only int ids framed by <s> and </s> are produced")
        ids: list[int] = self._tokenizer.encode(text).ids
        # SentencePiece gives one <unk> for a text that normalises to nothing.
        return ids if len(ids) > 2 else [BOS_ID, UNK_ID, EOS_ID]


def fast_tokenizer(sp_model: Path, name: str) -> Path:
    """The ``tokenizers`` file converted from the SentencePiece model ``sp_model``, once.

    ``name`` (the model's) starts the name of its folder in the model cache.

    Kept under the model cache, named after a digest of the model file's path, size and
    time, so a reinstalled package gets a conversion of its own.

    Raises:
        EmbeddingError: the model cannot be read or the cache folder cannot be written.
    """
    target = model_cache_dir() / f"{name}-tokenizer-{derived_copy_digest(sp_model)}"
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
        raise MissingDependencyError("tokenizers", "multilingual", _PURPOSE) from exc
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
