"""What an embedding can do is what it declares, whatever its class is called."""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.embeddings import MockEmbedding

from llama_index_video.embeddings.capabilities import (
    embeds_clips,
    node_embedder,
    output_dimension,
    usage,
)
from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
from llama_index_video.embeddings.spec import EmbeddingSpec


class Renamed(MockEmbedding):
    """A multimodal model of another name: it says what it does."""

    embeds_clips: ClassVar[bool] = True

    @classmethod
    def class_name(cls) -> str:
        return "SomethingElse"


def test_a_model_embeds_clips_when_its_class_says_so():
    assert embeds_clips(GeminiMultimodalEmbedding)
    assert embeds_clips(Renamed(embed_dim=4))
    assert not embeds_clips(MockEmbedding(embed_dim=4))
    assert EmbeddingSpec(backend="gemini").multimodal
    assert not EmbeddingSpec().multimodal


def test_a_plain_model_declares_no_dimension_node_embedder_or_usage():
    plain = MockEmbedding(embed_dim=4)
    assert output_dimension(plain) is None
    assert node_embedder(plain) is None and node_embedder(None) is None
    assert usage(plain) is None


def test_a_gemini_model_declares_them_all():
    model = GeminiMultimodalEmbedding(api_key="k", output_dimensionality=256)
    assert output_dimension(model) == 256
    assert node_embedder(model) == model.try_embed_nodes
    assert usage(model) is not None and usage(model).requests == 0
