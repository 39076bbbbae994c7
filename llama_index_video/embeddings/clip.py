"""A local CLIP-family image-text embedding through transformers, for visual search.

Frames are embedded as pictures and queries as text, into one space, so "the slide
with the database diagram" can find a frame that has no words on it. The default
model, ``openai/clip-vit-base-patch32`` (~600 MB), is downloaded by transformers on
first use and cached by it; any Hugging Face id or local folder of a model with
``get_text_features``/``get_image_features`` (CLIP, SigLIP, ...) works. The model is
loaded on the first embedding, once per process and device, on the CPU by default.

LlamaIndex hands an embedding model only ``node.get_content(EMBED)`` strings. A frame
node returns a :class:`~llama_index_video.reader.nodes.MediaText` carrying its image
path, and this model embeds that image; every other string is embedded as text. So
frame nodes can go through a plain ``VectorStoreIndex`` or ``IngestionPipeline`` as
well as ``MultiModalVectorStoreIndex`` (which calls :meth:`get_image_embedding`).
Vectors are L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
from io import BytesIO
from pathlib import Path
from typing import Any, TypeGuard

from llama_index.core.base.embeddings.base import Embedding
from llama_index.core.bridge.pydantic import Field
from llama_index.core.embeddings import MultiModalEmbedding
from llama_index.core.schema import ImageType

from llama_index_video.embeddings.threaded import ThreadedEmbedding
from llama_index_video.errors import EmbeddingError, MissingDependencyError
from llama_index_video.reader.nodes import MediaText
from llama_index_video.weights import CLIP_VIT_B32

logger = logging.getLogger(__name__)

DEFAULT_CLIP_MODEL = CLIP_VIT_B32


class ClipEmbedding(ThreadedEmbedding, MultiModalEmbedding):
    """A CLIP-family model: frames (``MediaText`` or image files) as images, the rest as text.

    Raises:
        MissingDependencyError: ``transformers`` or ``torch`` is not installed (on
            construction).
        EmbeddingError: the model cannot be downloaded or loaded (on first use).
    """

    model_name: str = Field(
        default=DEFAULT_CLIP_MODEL,
        description="Hugging Face id or local folder of a CLIP-family model.",
    )
    device: str = Field(default="cpu", description="Torch device the model runs on.")
    max_length: int = Field(
        default=77, gt=0, description="Text tokens kept; CLIP's window is 77 tokens."
    )

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        if importlib.util.find_spec("transformers") is None:
            raise MissingDependencyError("transformers", "visual", "Visual search (CLIP)")
        if importlib.util.find_spec("torch") is None:  # not in the extra: PyPI's is CUDA
            raise MissingDependencyError(
                "torch",
                "visual",
                "Visual search (CLIP)",
                install="pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
            )

    @classmethod
    def class_name(cls) -> str:
        return "VideoClipEmbedding"  # "ClipEmbedding" is LlamaIndex's own CLIP embedding

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._embed_texts([query])[0]

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        images = {i: t.media_path for i, t in enumerate(texts) if _is_image(t)}
        plain = [i for i in range(len(texts)) if i not in images]
        vectors: dict[int, Embedding] = {}
        if images:
            vectors.update(zip(images, self._embed_images(list(images.values())), strict=True))
        if plain:
            found = self._embed_texts([str(texts[i]) for i in plain])
            vectors.update(zip(plain, found, strict=True))
        return [vectors[i] for i in range(len(texts))]

    def _get_image_embedding(self, img_file_path: ImageType) -> Embedding:
        return self._embed_images([img_file_path])[0]

    async def _aget_image_embedding(self, img_file_path: ImageType) -> Embedding:
        return await asyncio.to_thread(self._get_image_embedding, img_file_path)

    def _get_image_embeddings(self, img_file_paths: list[ImageType]) -> list[Embedding]:
        return self._embed_images(img_file_paths)

    def _embed_texts(self, texts: list[str]) -> list[Embedding]:
        model, processor = _load(self.model_name, self.device)
        inputs = processor(
            text=texts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.max_length,
        )
        return _features(model.get_text_features, inputs, self.device)

    def _embed_images(self, images: list[ImageType] | list[Path]) -> list[Embedding]:
        from PIL import Image

        model, processor = _load(self.model_name, self.device)
        pictures = []
        for image in images:
            source = image if isinstance(image, BytesIO) else Path(image)
            try:
                with Image.open(source) as picture:
                    pictures.append(picture.convert("RGB"))
            except OSError as exc:
                raise EmbeddingError(f"{image}: cannot be read as an image ({exc})") from exc
        inputs = processor(images=pictures, return_tensors="pt")
        return _features(model.get_image_features, inputs, self.device)


def _is_image(text: str) -> TypeGuard[MediaText]:
    return isinstance(text, MediaText) and text.mimetype.startswith("image/")


def _features(encode: Any, inputs: Any, device: str) -> list[Embedding]:
    """Run ``encode`` on ``inputs`` and return L2-normalised vectors as lists."""
    import torch

    with torch.inference_mode():
        output = encode(**inputs.to(device))
        # transformers 5 returns a model output whose pooler_output is projected; 4.x a tensor.
        features = output if isinstance(output, torch.Tensor) else output.pooler_output
        features = torch.nn.functional.normalize(features.float(), dim=-1)
    return [row.tolist() for row in features.cpu()]


@functools.lru_cache(maxsize=2)
def _load(model_name: str, device: str) -> tuple[Any, Any]:
    """The model (in eval mode on ``device``) and its processor, loaded once."""
    from transformers import AutoModel, AutoProcessor

    logger.info("loading visual embedding model %s on %s", model_name, device)
    try:
        model = AutoModel.from_pretrained(model_name).to(device).eval()
        processor = AutoProcessor.from_pretrained(model_name)
    except Exception as exc:  # OSError, ValueError, hub errors: all mean "cannot load"
        raise EmbeddingError(
            f"visual embedding model '{model_name}' cannot be loaded "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
            "it is downloaded on first use: connect once, or pass a local model folder"
        ) from exc
    if not hasattr(model, "get_image_features") or not hasattr(model, "get_text_features"):
        raise EmbeddingError(
            f"'{model_name}' is not an image-text model (no get_image_features); "
            "use a CLIP-family model such as openai/clip-vit-base-patch32"
        )
    return model, processor
