"""``TimestampFramePostprocessor``: give each retrieved moment its neighbours and its frame.

Retrieval finds the unit that matches the question, but the answer may sit in the
next one ("...the stratosphere warms up because" | "UV is absorbed by ozone"), or on
screen only (an axis label never spoken). For every timed hit this postprocessor
attaches the neighbouring transcript units, the frame on screen at that moment and the
text read on that frame, and merges hits from the same file whose contexts overlap
(:mod:`~llama_index_video.postprocessing.attached` does the work, on plain data).

The result nodes are :class:`MomentNode`s: ``ImageNode``s whose image is the attached
frame, so a multimodal LLM in ``RetrieverQueryEngine(multimodal=True)`` receives the
picture, and whose text is the context, one ``[file mm:ss-mm:ss]`` labelled line per
unit (``[file mm:ss-mm:ss] On screen: ...`` for the frame's text), so any LLM can cite it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from llama_index.core.base.llms.types import BaseContentBlock, ImageBlock, TextBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr, model_validator
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, ImageNode, MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.storage.docstore.types import BaseDocumentStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video.postprocessing.attached import (
    ContextLine,
    Merged,
    moment_parts,
    with_context,
)
from llama_index_video.postprocessing.context import ContextOptions
from llama_index_video.postprocessing.timeline import (
    DocstoreTimeline,
    Timeline,
    VectorStoreTimeline,
)

_STORES = ("vector_store", "docstore")


class MomentNode(ImageNode):
    """A retrieved moment with its context units and, as its image, the attached frame."""

    context: list[ContextLine] = Field(default_factory=list)
    hit_ids: list[str] = Field(default_factory=list)
    hit_text: str = Field(default="", description="The text of the retrieved node alone.")
    frame_time: float | None = None

    def get_content_blocks(
        self, metadata_mode: MetadataMode = MetadataMode.NONE
    ) -> list[BaseContentBlock]:
        """The labelled context as text, then the frame (``ImageNode`` would drop the text).

        A frame file that has gone missing is left out rather than failing the query.
        """
        blocks: list[BaseContentBlock] = list(self.get_metadata_content_blocks(metadata_mode))
        blocks.append(TextBlock(text=self.text))
        if self.image_path and Path(self.image_path).is_file():
            blocks.append(ImageBlock(path=Path(self.image_path), image_mimetype="image/jpeg"))
        return blocks


class TimestampFramePostprocessor(BaseNodePostprocessor):
    """Attach neighbouring transcript, the frame on screen and its text to each timed hit.

    Give it the vector store the nodes live in (e.g. ``ChromaVectorStore``) or a
    docstore (for stores that keep nodes there, e.g. ``SimpleVectorStore``); context is
    looked up there (see :mod:`llama_index_video.postprocessing.context`).

    ``to_dict()`` keeps the store object, so ``from_dict(p.to_dict())`` rebuilds the
    postprocessor in the same process. A store cannot be written as JSON: ``to_json()``
    says so; write the settings with ``to_json(exclude={"vector_store", "docstore"})`` and
    pass the store to ``from_json(text, vector_store=...)``.
    """

    vector_store: BasePydanticVectorStore | None = Field(
        default=None, description="The vector store the nodes live in (e.g. Chroma)."
    )
    docstore: BaseDocumentStore | None = Field(
        default=None, description="Or the docstore the nodes live in."
    )
    neighbours: int = Field(
        default=1, ge=0, description="Transcript units attached before and after each hit."
    )
    window_seconds: float | None = Field(
        default=None,
        ge=0,
        description="Instead of a unit count, attach every unit within +/- this many seconds.",
    )
    attach_frames: bool = Field(
        default=True, description="Attach the frame on screen and the text read on it."
    )
    frame_choice: Literal["inside", "nearest"] = Field(
        default="inside",
        description=(
            "'inside': the frame on screen longest during the hit (else the nearest); "
            "'nearest': the frame whose time is closest to the hit's start."
        ),
    )
    merge: bool = Field(default=True, description="Merge overlapping contexts of one file.")
    search_seconds: float = Field(
        default=120.0, gt=0, description="How far around a hit neighbours are looked for."
    )
    index_folder: str | None = Field(
        default=None,
        description=(
            "The index folder the stored frame paths are relative to (VideoIndex sets it): "
            "attached frames get paths that resolve from any working directory. "
            "None: the paths as stored."
        ),
    )

    _timeline: Timeline = PrivateAttr()

    @model_validator(mode="after")
    def _needs_a_store(self) -> TimestampFramePostprocessor:
        if self.docstore is not None:
            self._timeline = DocstoreTimeline(self.docstore)
        elif self.vector_store is not None:
            self._timeline = VectorStoreTimeline(self.vector_store)
        else:
            raise ValueError(_WHAT_TO_PASS)
        return self

    @classmethod
    def class_name(cls) -> str:
        """The serialisation id."""
        return "TimestampFramePostprocessor"

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The settings, with the live store itself (``from_dict`` takes it back)."""
        excluded = set(kwargs.pop("exclude", None) or ())
        data = super().to_dict(exclude=excluded | set(_STORES), **kwargs)
        data.update(
            (name, getattr(self, name))
            for name in _STORES
            if name not in excluded and getattr(self, name) is not None
        )
        return data

    def to_json(self, **kwargs: Any) -> str:
        """The settings as JSON; the store must be excluded (see the class docstring)."""
        excluded = set(kwargs.get("exclude") or ())
        if any(getattr(self, name) is not None and name not in excluded for name in _STORES):
            raise TypeError(_NO_JSON)
        return super().to_json(**kwargs)

    @property
    def options(self) -> ContextOptions:
        """The context these settings ask for."""
        return ContextOptions(
            neighbours=self.neighbours,
            window_seconds=self.window_seconds,
            frames=self.attach_frames,
            frame_choice=self.frame_choice,
            search_seconds=self.search_seconds,
        )

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return [
            hit
            if moment is None
            else NodeWithScore(node=_moment_node(moment, self.index_folder), score=hit.score)
            for hit, moment in with_context(nodes, self._timeline, self.options, merge=self.merge)
        ]


_WHAT_TO_PASS = (
    "TimestampFramePostprocessor needs the vector_store or the docstore the nodes live in: "
    "pass vector_store=... (e.g. the ChromaVectorStore of the index) or docstore=..."
)
_NO_JSON = (
    "TimestampFramePostprocessor.to_json cannot write its vector store or docstore: "
    'call to_json(exclude={"vector_store", "docstore"}) and pass the store again to '
    "from_json(text, vector_store=...) or from_json(text, docstore=...)"
)


def _moment_node(moment: Merged, index_folder: str | None) -> MomentNode:
    source = cast("BaseNode", moment.source)  # hits of a LlamaIndex retriever
    parts = moment_parts(moment, index_folder)
    return MomentNode(
        id_=source.node_id,
        text=parts.text,
        metadata=dict(source.metadata),  # type: ignore[call-arg]  # mypy sees only the alias "extra_info"
        excluded_embed_metadata_keys=list(source.excluded_embed_metadata_keys),
        excluded_llm_metadata_keys=list(source.excluded_llm_metadata_keys),
        relationships=dict(source.relationships),
        image_path=parts.frame_path,
        image_mimetype="image/jpeg" if parts.frame_path else None,
        context=parts.context,
        hit_ids=moment.hit_ids,
        hit_text=source.get_content(),
        frame_time=parts.frame_time,
    )
