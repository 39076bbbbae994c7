"""``TimestampFramePostprocessor``: give each retrieved moment its neighbours and its frame.

Retrieval finds the unit that matches the question, but the answer may sit in the
next one ("...the stratosphere warms up because" | "UV is absorbed by ozone"), or on
screen only (an axis label never spoken). For every timed hit this postprocessor
attaches the neighbouring transcript units and the frame on screen at that moment,
merges hits from the same file whose contexts overlap (so the generator does not read
the same minute twice), and keeps the input's order and scores. Untimed nodes (text
documents) pass through unchanged.

The result nodes are :class:`MomentNode`s: ``ImageNode``s whose image is the attached
frame, so a multimodal LLM in ``RetrieverQueryEngine(multimodal=True)`` receives the
picture, and whose text is the context, one ``[file mm:ss-mm:ss]`` labelled line per
unit, so any LLM can cite it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from llama_index.core.base.llms.types import BaseContentBlock, ImageBlock, TextBlock
from llama_index.core.bridge.pydantic import BaseModel, Field, PrivateAttr
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
from llama_index_video.postprocessing.timeline import (
    DocstoreTimeline,
    Linked,
    Timeline,
    VectorStoreTimeline,
    follow_links,
    of_modality,
    span,
)

TIMED_MODALITIES = ("transcript", "frame", "ocr")


class ContextUnit(BaseModel):
    """One neighbouring unit attached to a moment."""

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
class _Moment:
    """A hit being expanded; merged hits share one."""

    source: BaseNode
    content_hash: str
    start: float
    end: float
    units: dict[str, BaseNode] = field(default_factory=dict)
    hit_ids: list[str] = field(default_factory=list)
    frame: BaseNode | None = None

    @property
    def modality(self) -> str:
        return str(self.source.metadata.get(schema.MODALITY))

    def shows(self, other: _Moment) -> bool:
        """Whether ``other``'s hit falls inside this moment's context window."""
        return (
            self.content_hash == other.content_hash
            and other.start <= self.hi
            and other.end >= self.lo
        )

    def absorb(self, other: _Moment) -> None:
        """Take in a later, lower-ranked hit that this moment already shows.

        Only the units of the hit itself join the context (not its neighbours, so
        moments do not chain into one); the moment stays the best hit: its span, label
        and text are what the user plays and cites. Its frame is the one on screen
        during its span: a retrieved frame replaces the attached one only if it appeared
        within that span (it matched the query itself, so it is the better picture of
        it); one shown earlier, for a neighbour, would illustrate something else.
        """
        for unit_id, unit in other.units.items():
            if _overlaps(span(unit), other.start, other.end):
                self.units[unit_id] = unit
        self.hit_ids.extend(other.hit_ids)
        if other.modality == "frame" and self.modality != "frame":
            appeared = float(other.source.metadata.get(schema.FRAME_TIME, other.start))
            if self.start <= appeared <= self.end:
                self.frame = other.frame

    @property
    def lo(self) -> float:
        return min([self.start, *(span(u)[0] for u in self.units.values())])  # type: ignore[index]

    @property
    def hi(self) -> float:
        return max([self.end, *(span(u)[1] for u in self.units.values())])  # type: ignore[index]


class TimestampFramePostprocessor(BaseNodePostprocessor):
    """Attach neighbouring transcript and the nearest frame to each timed hit.

    Give it the vector store the nodes live in (e.g. ``ChromaVectorStore``) or a
    docstore; neighbours and frames are looked up there by metadata.
    """

    neighbours: int = Field(
        default=1, ge=0, description="Transcript units attached before and after each hit."
    )
    window_seconds: float | None = Field(
        default=None,
        ge=0,
        description="Instead of a unit count, attach every unit within +/- this many seconds.",
    )
    attach_frames: bool = Field(default=True, description="Attach the frame on screen.")
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

    _timeline: Timeline = PrivateAttr()

    def __init__(
        self,
        *,
        vector_store: BasePydanticVectorStore | None = None,
        docstore: BaseDocumentStore | None = None,
        timeline: Timeline | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if timeline is None:
            if docstore is not None:
                timeline = DocstoreTimeline(docstore)
            elif vector_store is not None:
                timeline = VectorStoreTimeline(vector_store)
            else:
                raise ValueError("pass the vector_store or the docstore the nodes live in")
        self._timeline = timeline

    @classmethod
    def class_name(cls) -> str:
        return "TimestampFramePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        linked = self._follow_links(nodes)
        nearby = self._fetch_nearby(nodes) if linked is None else {}
        entries: list[tuple[NodeWithScore, _Moment | None]] = []
        shown: set[str] = set()  # context units already handed on by a better moment
        for hit in nodes:
            moment = self._expand(hit.node, nearby, linked)
            if moment is not None and self.merge:
                target = next((m for _, m in entries if m is not None and m.shows(moment)), None)
                if target is not None:
                    target.absorb(moment)
                    shown.update(target.units)
                    continue
                moment.units = {k: u for k, u in moment.units.items() if k not in shown}
                shown.update(moment.units)
            entries.append((hit, moment))
        return [
            hit if moment is None else NodeWithScore(node=_moment_node(moment), score=hit.score)
            for hit, moment in entries
        ]

    def _follow_links(self, hits: Sequence[NodeWithScore]) -> dict[str, Linked] | None:
        """Context by id through the reader's links, when they answer what was asked."""
        if self.window_seconds is not None or self.frame_choice != "inside":
            return None
        timed = [
            h.node
            for h in hits
            if span(h.node) is not None
            and h.node.metadata.get(schema.CONTENT_HASH) is not None
            and h.node.metadata.get(schema.MODALITY) in TIMED_MODALITIES
        ]
        return follow_links(
            self._timeline, timed, neighbours=self.neighbours, frames=self.attach_frames
        )

    def _fetch_nearby(self, hits: Sequence[NodeWithScore]) -> dict[str, list[BaseNode]]:
        """One lookup per file covering every hit in it."""
        ranges: dict[str, tuple[float, float]] = {}
        pad = max(self.search_seconds, self.window_seconds or 0.0)
        for hit in hits:
            hit_span, key = span(hit.node), hit.node.metadata.get(schema.CONTENT_HASH)
            if hit_span is None or key is None:
                continue
            lo, hi = ranges.get(key, (hit_span[0], hit_span[1]))
            ranges[key] = (min(lo, hit_span[0]), max(hi, hit_span[1]))
        return {
            key: self._timeline.overlapping(key, lo - pad, hi + pad)
            for key, (lo, hi) in ranges.items()
        }

    def _expand(
        self,
        node: BaseNode,
        nearby: dict[str, list[BaseNode]],
        linked: dict[str, Linked] | None,
    ) -> _Moment | None:
        hit_span = span(node)
        key = node.metadata.get(schema.CONTENT_HASH)
        modality = node.metadata.get(schema.MODALITY)
        if hit_span is None or key is None or modality not in TIMED_MODALITIES:
            return None
        if linked is not None:
            context = linked[node.node_id]
            moment = _Moment(node, key, hit_span[0], hit_span[1], hit_ids=[node.node_id])
            moment.units = {unit.node_id: unit for unit in context.units}
            moment.frame = context.frame
            return moment
        found = nearby.get(key, [])
        units = of_modality(found, "transcript")
        moment = _Moment(node, key, hit_span[0], hit_span[1], hit_ids=[node.node_id])
        for unit in self._context_units(node, hit_span, units):
            moment.units[unit.node_id] = unit
        if modality == "frame":
            moment.frame = node
        elif self.attach_frames:
            moment.frame = self._choose_frame(hit_span, of_modality(found, "frame"))
        return moment

    def _context_units(
        self, node: BaseNode, hit_span: tuple[float, float], units: list[BaseNode]
    ) -> list[BaseNode]:
        start, end = hit_span
        if self.window_seconds is not None:
            lo, hi = start - self.window_seconds, end + self.window_seconds
            return [u for u in units if _overlaps(span(u), lo, hi)]
        overlapping = [i for i, u in enumerate(units) if _overlaps(span(u), start, end)]
        if node.metadata.get(schema.MODALITY) == "transcript":
            ids = [u.node_id for u in units]
            overlapping = [ids.index(node.node_id)] if node.node_id in ids else overlapping
        if not overlapping:
            return [node] if node.metadata.get(schema.MODALITY) == "transcript" else []
        first = max(0, overlapping[0] - self.neighbours)
        last = min(len(units), overlapping[-1] + self.neighbours + 1)
        return units[first:last]

    def _choose_frame(
        self, hit_span: tuple[float, float], frames: list[BaseNode]
    ) -> BaseNode | None:
        if not frames:
            return None
        start, end = hit_span

        def distance(frame: BaseNode) -> float:
            return abs(float(frame.metadata.get(schema.FRAME_TIME, span(frame)[0])) - start)  # type: ignore[index]

        if self.frame_choice == "inside":
            best = max(frames, key=lambda f: (_overlap(span(f), start, end), -distance(f)))
            if _overlap(span(best), start, end) > 0:
                return best
        return min(frames, key=distance)


def _overlaps(node_span: tuple[float, float] | None, lo: float, hi: float) -> bool:
    return node_span is not None and node_span[0] <= hi and node_span[1] >= lo


def _overlap(node_span: tuple[float, float] | None, lo: float, hi: float) -> float:
    if node_span is None:
        return 0.0
    return max(0.0, min(node_span[1], hi) - max(node_span[0], lo))


def _moment_node(moment: _Moment) -> MomentNode:
    source = moment.source
    units = sorted(moment.units.values(), key=lambda u: span(u) or (0.0, 0.0))
    context = [
        ContextUnit(
            node_id=u.node_id,
            start=span(u)[0],  # type: ignore[index]
            end=span(u)[1],  # type: ignore[index]
            text=u.get_content(),
            label=str(u.metadata.get(schema.LABEL, "")),
            modality=str(u.metadata.get(schema.MODALITY, "transcript")),
            speaker=u.metadata.get(schema.SPEAKER),
        )
        for u in units
    ]
    lines = [f"{c.label} {c.speaker + ': ' if c.speaker else ''}{c.text}" for c in context]
    if source.metadata.get(schema.MODALITY) != "transcript":
        lines.insert(0, f"{source.metadata.get(schema.LABEL, '')} {source.get_content()}")
    frame = moment.frame
    frame_path = frame.metadata.get(schema.IMAGE_PATH) if frame is not None else None
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
