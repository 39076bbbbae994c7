"""Finding a hit's context: the units spoken around it, the frame on screen, the text on it.

Two strategies give the same :class:`MomentContext` for every timed hit:

- :func:`by_links` follows the ids the reader stores (PREVIOUS/NEXT between units,
  ``frame_id`` on a unit, ``unit_id`` on a frame or OCR node, ``ocr_ids`` on a frame):
  one batched lookup per hop, a few milliseconds even on 100 hours of transcript;
- :func:`by_time_ranges` fetches each file's nodes around its hits (one metadata-filtered
  lookup per file, about 100x slower in Chroma) and works the links out from times, with
  the rules the reader used to store them. It serves nodes made without links and a
  window in seconds, which links cannot express.

:func:`find_contexts` takes the links for every hit they can answer for, and time ranges
for the rest (an audio file's units link no frame, so on their own links cannot tell
whether frames exist). A contract test runs every case through both and requires the
same moments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from llama_index_video import schema
from llama_index_video.postprocessing.timeline import Timeline, of_modality, overlaps, span
from llama_index_video.reader.moment_links import closest, screen_text_ids, shows_text
from llama_index_video.stored import NEXT, PREVIOUS, Moment

TIMED_MODALITIES = ("transcript", "frame", "ocr")
_SHOWN = ("frame", "ocr")  # hits that are their own frame


@dataclass(frozen=True, kw_only=True)
class ContextOptions:
    """What context to find for each hit.

    Attributes:
        neighbours: Transcript units attached before and after the hit's own unit.
        window_seconds: Instead of a unit count, every unit within +/- this many seconds.
        frames: Attach the frame on screen (and the text read from it).
        frame_choice: ``"inside"``: the frame on screen longest during the hit (else the
            nearest); ``"nearest"``: the frame whose time is closest to the hit's start.
        search_seconds: How far around a hit :func:`by_time_ranges` looks.
    """

    neighbours: int = 1
    window_seconds: float | None = None
    frames: bool = True
    frame_choice: Literal["inside", "nearest"] = "inside"
    search_seconds: float = 120.0

    @property
    def linkable(self) -> bool:
        """Whether stored links express these options (a window in seconds is not a link)."""
        return self.window_seconds is None and self.frame_choice == "inside"


@dataclass(frozen=True)
class MomentContext:
    """A timed hit's context.

    Attributes:
        units: Transcript units in time order.
        frame: The frame on screen; a frame or OCR hit is its own frame.
        screen: The ``ocr`` nodes holding the text on that frame (an OCR hit's is itself).
    """

    units: tuple[Moment, ...] = ()
    frame: Moment | None = None
    screen: tuple[Moment, ...] = ()


def is_timed(node: Moment) -> bool:
    """Whether ``node`` is a moment of a file this package can give context to."""
    return (
        span(node) is not None
        and node.metadata.get(schema.CONTENT_HASH) is not None
        and node.metadata.get(schema.MODALITY) in TIMED_MODALITIES
    )


def find_contexts(
    timeline: Timeline, hits: Sequence[Moment], options: ContextOptions
) -> dict[str, MomentContext]:
    """The context of each timed hit, by id: through links where they answer, else by times."""
    linked = _linked_contexts(timeline, hits, options)
    rest = [hit for hit in hits if hit.node_id not in linked]
    return {**linked, **by_time_ranges(timeline, rest, options)} if rest else linked


def by_links(
    timeline: Timeline, hits: Sequence[Moment], options: ContextOptions
) -> dict[str, MomentContext] | None:
    """Each hit's context through the reader's links; None if they cannot answer for all.

    A transcript hit is its own unit; a frame or OCR hit starts from its ``unit_id``.
    Nodes made by other code, or frames indexed before frames linked their text
    (``ocr_ids``), lack links: the caller then looks up time ranges.
    """
    linked = _linked_contexts(timeline, hits, options)
    return linked if all(hit.node_id in linked for hit in hits) else None


def _linked_contexts(
    timeline: Timeline, hits: Sequence[Moment], options: ContextOptions
) -> dict[str, MomentContext]:
    """The contexts of the hits whose links answer (see :func:`by_links`), by id."""
    if not options.linkable:
        return {}
    cores: dict[str, str] = {}
    for hit in hits:
        modality = hit.metadata.get(schema.MODALITY)
        if modality == "transcript" and (not options.frames or schema.FRAME_ID in hit.metadata):
            cores[hit.node_id] = hit.node_id
        elif modality in _SHOWN and schema.UNIT_ID in hit.metadata:
            cores[hit.node_id] = str(hit.metadata[schema.UNIT_ID])
    known = {hit.node_id: hit for hit in hits}
    _fetch(timeline, known, cores.values())
    chains = {hit: [known[core]] for hit, core in cores.items() if core in known}
    for hop in range(options.neighbours + 1):
        wanted: set[str] = set()
        for chain in chains.values():
            if hop < options.neighbours:
                wanted.add(_link(chain[0], PREVIOUS) or "")
                wanted.add(_link(chain[-1], NEXT) or "")
            if hop == 0 and options.frames:
                wanted.add(str(chain[0].metadata.get(schema.FRAME_ID) or ""))
        _fetch(timeline, known, wanted)
        if hop == options.neighbours:
            break
        for chain in chains.values():
            before = known.get(_link(chain[0], PREVIOUS) or "")
            after = known.get(_link(chain[-1], NEXT) or "")
            chain[:0] = [before] if before is not None else []
            chain.extend([after] if after is not None else [])
    frames: dict[str, Moment | None] = {}
    for hit_id in cores:
        hit = known[hit_id]
        if hit.metadata.get(schema.MODALITY) in _SHOWN:
            frames[hit_id] = hit
        elif options.frames:
            frames[hit_id] = known.get(str(hit.metadata.get(schema.FRAME_ID) or ""))
        else:
            frames[hit_id] = None
    unread = {  # frames indexed before frames linked their text
        hit_id
        for hit_id, frame in frames.items()
        if frame is not None and _is_frame(frame) and schema.OCR_IDS not in frame.metadata
    }
    frames = {hit_id: frame for hit_id, frame in frames.items() if hit_id not in unread}
    shown = [f for f in frames.values() if f is not None and _is_frame(f)]
    _fetch(timeline, known, (i for frame in shown for i in screen_text_ids(frame)))
    contexts: dict[str, MomentContext] = {}
    for hit_id, frame in frames.items():
        texts = [known[i] for i in screen_text_ids(frame) if i in known] if frame else []
        contexts[hit_id] = MomentContext(
            tuple(chains.get(hit_id, ())), frame, _screen(frame, texts)
        )
    return contexts


def by_time_ranges(
    timeline: Timeline, hits: Sequence[Moment], options: ContextOptions
) -> dict[str, MomentContext]:
    """Each hit's context from the nodes of its file around it (one lookup per file)."""
    nearby = _nearby(timeline, hits, options)
    contexts: dict[str, MomentContext] = {}
    for hit in hits:
        found = nearby[str(hit.metadata[schema.CONTENT_HASH])]
        units = of_modality(found, "transcript")
        frame: Moment | None = None
        if hit.metadata.get(schema.MODALITY) in _SHOWN:
            frame = hit
        elif options.frames:
            frame = _frame_for(hit, of_modality(found, "frame"), options.frame_choice)
        texts = [n for n in of_modality(found, "ocr") if frame is not None and shows_text(frame, n)]
        contexts[hit.node_id] = MomentContext(
            tuple(_units_for(hit, units, options)), frame, _screen(frame, texts)
        )
    return contexts


def _nearby(
    timeline: Timeline, hits: Sequence[Moment], options: ContextOptions
) -> dict[str, list[Moment]]:
    """The nodes around every hit, one lookup per file covering all of its hits."""
    ranges: dict[str, tuple[float, float]] = {}
    pad = max(options.search_seconds, options.window_seconds or 0.0)
    for hit in hits:
        start, end = span(hit)  # type: ignore[misc]  # hits are timed
        key = str(hit.metadata[schema.CONTENT_HASH])
        lo, hi = ranges.get(key, (start, end))
        ranges[key] = (min(lo, start), max(hi, end))
    return {
        key: list(timeline.overlapping(key, lo - pad, hi + pad)) for key, (lo, hi) in ranges.items()
    }


def _units_for(hit: Moment, units: list[Moment], options: ContextOptions) -> list[Moment]:
    start, end = span(hit)  # type: ignore[misc]  # hits are timed
    if options.window_seconds is not None:
        lo, hi = start - options.window_seconds, end + options.window_seconds
        return [u for u in units if overlaps(u, lo, hi)]
    if hit.metadata.get(schema.MODALITY) == "transcript":
        core = hit.node_id
    elif units:
        core = closest(hit, units, by_overlap=False)
    else:
        return []
    ids = [u.node_id for u in units]
    if core not in ids:
        return [hit]
    index = ids.index(core)
    return units[max(0, index - options.neighbours) : index + options.neighbours + 1]


def _frame_for(
    hit: Moment, frames: list[Moment], choice: Literal["inside", "nearest"]
) -> Moment | None:
    if not frames:
        return None
    by_id = {f.node_id: f for f in frames}
    if choice == "inside":
        return by_id[closest(hit, frames, by_overlap=True)]
    start = span(hit)[0]  # type: ignore[index]  # hits are timed
    return min(frames, key=lambda f: abs(_frame_time(f) - start))


def _screen(frame: Moment | None, texts: list[Moment]) -> tuple[Moment, ...]:
    """The text on ``frame``: ``texts`` read on a frame node, an OCR hit itself."""
    if frame is None:
        return ()
    if frame.metadata.get(schema.MODALITY) == "ocr":
        return (frame,)
    return tuple(texts)


def _frame_time(frame: Moment) -> float:
    return float(frame.metadata.get(schema.FRAME_TIME, frame.metadata[schema.START_S]))


def _is_frame(node: Moment) -> bool:
    return node.metadata.get(schema.MODALITY) == "frame"


def _link(node: Moment, relation: str) -> str | None:
    related = node.relationships.get(relation)
    return getattr(related, "node_id", None)


def _fetch(timeline: Timeline, known: dict[str, Moment], ids: Iterable[str]) -> None:
    missing = {i for i in ids if i and i not in known}
    if missing:
        known.update((node.node_id, node) for node in timeline.by_ids(missing))
