"""Fixtures for the answering tests: Claude wired to the fake Anthropic API, frames."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from llama_index_video.answering.claude import ClaudeMultimodalLLM
from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def make_claude(fake_anthropic: FakeAnthropicServer) -> Callable[..., ClaudeMultimodalLLM]:
    """Build a ``ClaudeMultimodalLLM`` talking to the fake API (options override)."""

    def make(**options: object) -> ClaudeMultimodalLLM:
        settings: dict[str, object] = {
            "api_key": fake_anthropic.api_key,
            "base_url": fake_anthropic.url,
            "max_retries": 2,
            "timeout": 5.0,
        }
        return ClaudeMultimodalLLM(**{**settings, **options})

    return make


@pytest.fixture
def big_frame(tmp_path: Path) -> Path:
    """A 3000x1500 JPEG frame: larger than the API's recommended 1568 px edge."""
    path = tmp_path / "frame_big.jpg"
    Image.new("RGB", (3000, 1500), (30, 120, 200)).save(path, quality=90)
    return path


@pytest.fixture
def frames(tmp_path: Path) -> list[Path]:
    """Twelve small distinct JPEG frames."""
    paths = []
    for index in range(12):
        path = tmp_path / f"frame_{index:02d}.jpg"
        Image.new("RGB", (320, 180), (index * 20, 40, 90)).save(path)
        paths.append(path)
    return paths


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised one-layer BERT cross-encoder saved locally.

    No reranker weights can be downloaded here; this checks the composition, not quality.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("cross-encoder")
    words = ["the", "a", "of", "in", "by", "is", "why", "temperature", "rise", "ozone", "uv"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
