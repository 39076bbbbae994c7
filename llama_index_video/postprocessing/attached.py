"""Moments with their context attached: what ``TimestampFramePostprocessor`` does to hits.

For every timed hit the neighbouring transcript units, the frame on screen at that
moment and the text read on that frame are attached (found as
:mod:`~llama_index_video.postprocessing.context` describes); hits from the same file
whose contexts overlap are merged (so the generator does not read the same minute
twice); the input's order and scores are kept. Untimed nodes (text documents) pass
through unchanged. A moment's text is its context, one ``[file mm:ss-mm:ss]`` labelled
line per unit (``[file mm:ss-mm:ss] On screen: ...`` for the frame's text), so any LLM
can cite it.

The work is done on plain data (:func:`with_context`, :func:`moment_parts`):
:class:`~llama_index_video.postprocessing.timestamp_frame.TimestampFramePostprocessor`
makes LlamaIndex ``MomentNode``s of it, :class:`MomentContexts` plain
:class:`ContextMoment`s (the command line's one-shot search).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index_video import schema
from llama_index_video.postprocessing.context import (
    ContextOptions,
    MomentContext,
    find_contexts,
    is_timed,
)
from llama_index_video.postprocessing.timeline import Timeline, overlaps, span
from llama_index_video.store.media_paths import resolved_path
from llama_index_video.stored import Link, Moment, Scored


@dataclass(frozen=True)
class ContextLine:
    """A unit attached to a moment: speech around it (``transcript``) or the text on its
    frame (``ocr``), with the span it was spoken or on screen."""

    node_id: str
    start: float
    end: float
    text: str
    label: str
    modality: str = "transcript"
    speaker: str | None = None


@dataclass(frozen=True)
class MomentParts:
    """What a moment with its context is made of, whatever node type holds it."""

    text: str
    context: list[ContextLine]
    frame_path: str | None
    frame_time: float | None


@dataclass(frozen=True)
class ContextMoment:
    """A retrieved moment with its context, as plain data (a ``MomentNode``'s fields)."""

    node_id: str
    text: str
    metadata: dict[str, Any]
    relationships: dict[str, Link]
    image_path: str | None
    context: list[ContextLine]
    hit_ids: list[str]
    hit_text: str
    frame_time: float | None

    def get_content(self) -> str:
        """Its labelled context lines."""
        return self.text


@dataclass
class Merged:
    """A hit being expanded; merged hits share one."""

    source: Moment
    content_hash: str
    start: float
    end: float
    units: dict[str, Moment] = field(default_factory=dict)
    hit_ids: list[str] = field(default_factory=list)
    frame: Moment | None = None
    screen: dict[str, Moment] = field(default_factory=dict)

    @classmethod
    def of(cls, hit: Moment, context: MomentContext) -> Merged:
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

    def shows(self, other: Merged) -> bool:
        """Whether ``other``'s hit falls inside this moment's context window."""
        return (
            self.content_hash == other.content_hash
            and other.start <= self.hi
            and other.end >= self.lo
        )

    def absorb(self, other: Merged) -> None:
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


def with_context(
    hits: Sequence[Any], timeline: Timeline, options: ContextOptions, *, merge: bool
) -> list[tuple[Any, Merged | None]]:
    """Each hit with the moment it becomes (None: untimed, or merged into a better one's,
    then left out), in the hits' order (see the module docstring)."""
    timed = [hit.node for hit in hits if is_timed(hit.node)]
    contexts = find_contexts(timeline, timed, options)
    entries: list[tuple[Any, Merged | None]] = []
    shown: set[str] = set()  # context units already handed on by a better moment
    for hit in hits:
        context = contexts.get(hit.node.node_id)
        moment = Merged.of(hit.node, context) if context is not None else None
        if moment is not None and merge:
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
    return entries


def moment_parts(moment: Merged, index_folder: str | None) -> MomentParts:
    """The labelled text, context and frame of a moment (frame paths resolved against
    ``index_folder``, as stored if None)."""
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
    return MomentParts("\n".join(lines), context, frame_path, frame_time)


def _as_line(unit: ContextLine) -> str:
    if unit.modality == "ocr":  # its lines on one line, as a frame's description has them
        return "On screen: " + "; ".join(unit.text.splitlines())
    return unit.text


def _context_unit(node: Moment) -> ContextLine:
    start, end = span(node)  # type: ignore[misc]  # context nodes are timed
    return ContextLine(
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


class MomentContexts:
    """Context attached to plain hits (``TimestampFramePostprocessor``'s defaults), as
    :class:`ContextMoment`\\ s.

    Args:
        timeline: Where the context is looked up.
        index_folder: The index folder frame paths are relative to.
    """

    def __init__(self, timeline: Timeline, *, index_folder: str | None) -> None:
        self._timeline = timeline
        self._index_folder = index_folder

    def postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
        """The hits with their context, merged (see the module docstring)."""
        return [
            hit if moment is None else Scored(_plain_moment(moment, self._index_folder), hit.score)
            for hit, moment in with_context(nodes, self._timeline, ContextOptions(), merge=True)
        ]


def _plain_moment(moment: Merged, index_folder: str | None) -> ContextMoment:
    parts = moment_parts(moment, index_folder)
    source = moment.source
    return ContextMoment(
        node_id=source.node_id,
        text=parts.text,
        metadata=dict(source.metadata),
        relationships=dict(source.relationships),
        image_path=parts.frame_path,
        context=parts.context,
        hit_ids=moment.hit_ids,
        hit_text=source.get_content(),
        frame_time=parts.frame_time,
    )
