"""``TimestampFramePostprocessor``: give each retrieved moment its neighbours and its frame.

Retrieval finds the unit that matches the question, but the answer may sit in the
next one ("...the stratosphere warms up because" | "UV is absorbed by ozone"), or on
screen only (an axis label never spoken). For every timed hit this postprocessor
attaches the neighbouring transcript units, the frame on screen at that moment and the
text read on that frame (found as :mod:`~llama_index_video.postprocessing.context`
describes), merges hits from the same file whose contexts overlap (so the generator
does not read the same minute twice), and keeps the input's order and scores. Untimed
nodes (text documents) pass through unchanged.

The result nodes are :class:`MomentNode`s: ``ImageNode``s whose image is the attached
frame, so a multimodal LLM in ``RetrieverQueryEngine(multimodal=True)`` receives the
picture, and whose text is the context, one ``[file mm:ss-mm:ss]`` labelled line per
unit (``[file mm:ss-mm:ss] On screen: ...`` for the frame's text), so any LLM can cite it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from llama_index.core.base.llms.types import BaseContentBlock, ImageBlock, TextBlock
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr, model_validator
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import (
    BaseNode,
    ImageNode,
    MetadataMode,
    NodeWithScore,
    QueryBundle,
)
from llama_index.core.storage.docstore.types import BaseDocumentStore
from llama_index.core.vector_stores.types import BasePydanticVectorStore

from llama_index_video import schema
from llama_index_video.postprocessing.context import (
    ContextOptions,
    MomentContext,
    find_contexts,
    is_timed,
)
from llama_index_video.postprocessing.timeline import (
    DocstoreTimeline,
    Timeline,
    VectorStoreTimeline,
    overlaps,
    span,
)
from llama_index_video.store.media_paths import resolved_path

_STORES = ("vector_store", "docstore")


class ContextUnit(BaseModel):
    """A unit attached to a moment: speech around it (``transcript``) or the text on its
    frame (``ocr``), with the span it was spoken or on screen."""

    node_id: str
    start: float
    end: float
    text: str
    label: str
    modality: str = "transcript"
    speaker: str | None = None


class MomentNode(ImageNode):
    """A retrieved moment with its context units and, as its image, the attached frame."""

    context: list[ContextUnit] = Field(default_factory=list)
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


@dataclass
class _Merged:
    """A hit being expanded; merged hits share one."""

    source: BaseNode
    content_hash: str
    start: float
    end: float
    units: dict[str, BaseNode] = field(default_factory=dict)
    hit_ids: list[str] = field(default_factory=list)
    frame: BaseNode | None = None
    screen: dict[str, BaseNode] = field(default_factory=dict)

    @classmethod
    def of(cls, hit: BaseNode, context: MomentContext) -> _Merged:
        start, end = span(hit)  # type: ignore[misc]  # only timed hits have a context
        return cls(
            hit,
            str(hit.metadata[schema.CONTENT_HASH]),
            start,
            end,
            units={unit.node_id: unit for unit in context.units},
            hit_ids=[hit.node_id],
            frame=context.frame,
            screen={text.node_id: text for text in context.screen},
        )

    @property
    def modality(self) -> str:
        return str(self.source.metadata.get(schema.MODALITY))

    def shows(self, other: _Merged) -> bool:
        """Whether ``other``'s hit falls inside this moment's context window."""
        return (
            self.content_hash == other.content_hash
            and other.start <= self.hi
            and other.end >= self.lo
        )

    def absorb(self, other: _Merged) -> None:
        """Take in a later, lower-ranked hit that this moment already shows.

        Only the units of the hit itself join the context (not its neighbours, so
        moments do not chain into one); the moment stays the best hit: its span, label
        and text are what the user plays and cites. Its frame is the one on screen
        during its span: a retrieved frame replaces the attached one only if it appeared
        within that span (it matched the query itself, so it is the better picture of
        it); one shown earlier, for a neighbour, would illustrate something else.
        """
        for unit_id, unit in other.units.items():
            if overlaps(unit, other.start, other.end):
                self.units[unit_id] = unit
        self.hit_ids.extend(other.hit_ids)
        if other.modality == "frame" and self.modality != "frame":
            appeared = float(other.source.metadata.get(schema.FRAME_TIME, other.start))
            if self.start <= appeared <= self.end:
                self.frame, self.screen = other.frame, other.screen

    @property
    def lo(self) -> float:
        return min([self.start, *(span(u)[0] for u in self.units.values())])  # type: ignore[index]

    @property
    def hi(self) -> float:
        return max([self.end, *(span(u)[1] for u in self.units.values())])  # type: ignore[index]


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
        timed = [hit.node for hit in nodes if is_timed(hit.node)]
        contexts = find_contexts(self._timeline, timed, self.options)
        entries: list[tuple[NodeWithScore, _Merged | None]] = []
        shown: set[str] = set()  # context units already handed on by a better moment
        for hit in nodes:
            context = contexts.get(hit.node.node_id)
            moment = _Merged.of(hit.node, context) if context is not None else None
            if moment is not None and self.merge:
                target = next((m for _, m in entries if m is not None and m.shows(moment)), None)
                if target is not None:
                    target.absorb(moment)
                    shown.update(target.units)
                    continue
                moment.units = {k: u for k, u in moment.units.items() if k not in shown}
                shown.update(moment.units)
            entries.append((hit, moment))
        on_screen: set[str] = set()  # on-screen text is read once too, by the best moment
        for _, moment in entries:
            if moment is not None:
                moment.screen = {k: t for k, t in moment.screen.items() if k not in on_screen}
                on_screen.update(moment.screen)
        return [
            hit
            if moment is None
            else NodeWithScore(node=_moment_node(moment, self.index_folder), score=hit.score)
            for hit, moment in entries
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


def _moment_node(moment: _Merged, index_folder: str | None) -> MomentNode:
    source = moment.source
    context = sorted(
        (_context_unit(node) for node in [*moment.units.values(), *moment.screen.values()]),
        key=lambda c: (c.start, c.end, c.modality != "transcript"),
    )
    lines = [f"{c.label} {c.speaker + ': ' if c.speaker else ''}{_as_line(c)}" for c in context]
    if source.node_id not in {c.node_id for c in context}:  # a frame hit
        lines.insert(0, f"{source.metadata.get(schema.LABEL, '')} {source.get_content()}")
    frame = moment.frame
    frame_path = frame.metadata.get(schema.IMAGE_PATH) if frame is not None else None
    if frame_path and index_folder is not None:
        frame_path = resolved_path(str(frame_path), Path(index_folder))
    frame_time = frame.metadata.get(schema.FRAME_TIME) if frame is not None else None
    return MomentNode(
        id_=source.node_id,
        text="\n".join(lines),
        metadata=dict(source.metadata),  # type: ignore[call-arg]  # mypy sees only the alias "extra_info"
        excluded_embed_metadata_keys=list(source.excluded_embed_metadata_keys),
        excluded_llm_metadata_keys=list(source.excluded_llm_metadata_keys),
        relationships=dict(source.relationships),
        image_path=frame_path,
        image_mimetype="image/jpeg" if frame_path else None,
        context=context,
        hit_ids=moment.hit_ids,
        hit_text=source.get_content(),
        frame_time=frame_time,
    )


def _as_line(unit: ContextUnit) -> str:
    if unit.modality == "ocr":  # its lines on one line, as a frame's description has them
        return "On screen: " + "; ".join(unit.text.splitlines())
    return unit.text


def _context_unit(node: BaseNode) -> ContextUnit:
    start, end = span(node)  # type: ignore[misc]  # context nodes are timed
    return ContextUnit(
        node_id=node.node_id,
        start=start,
        end=end,
        text=node.get_content(),
        label=str(node.metadata.get(schema.LABEL, "")),
        modality=str(node.metadata.get(schema.MODALITY, "transcript")),
        speaker=_text(node.metadata.get(schema.SPEAKER)),
    )


def _text(value: object) -> str | None:
    return str(value) if value else None
