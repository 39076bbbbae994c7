"""One door to a recording's moments: the facade's side that names one recording.

What a front door (the CLI's ``clip``, ``ask --export``, ``transcript`` and
``chapters``, the service's download, the agent tools, the MCP server) needs of one
indexed recording is here, once, on :class:`~llama_index_video.index.VideoIndex`
(which inherits it): the recording a name refers to (:meth:`ManifestRecordings.recording`:
one error for an unknown or ambiguous name), what was said in it between two times, its
chapters, what was on screen at a time, and a cut of it or of several moments into one
file, under one moment limit (:data:`MAX_MOMENT_SECONDS`). Every method takes a name
or a recording already resolved, so a door resolves once and asks several things.

Only what the manifest recorded can be named
(:func:`~llama_index_video.store.recording_names.resolve_source`), so no caller reaches a file
the index does not list. The store is imported when a method runs: the CLI reads
:data:`MAX_MOMENT_SECONDS` while it parses arguments. Naming a recording and cutting it
need the manifest alone (:class:`ManifestRecordings`), so :class:`FolderView` does them
without opening the vectors (``clip`` without subtitles).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from llama_index_video import schema
from llama_index_video.errors import IndexBusyError, MomentRequestError, printable_path

if TYPE_CHECKING:
    from llama_index.core.llms.llm import LLM
    from llama_index.core.vector_stores.types import BasePydanticVectorStore

    from llama_index_video.media.export import ExportReport, JoinReport, Mode
    from llama_index_video.media.export_subtitles import Cue
    from llama_index_video.results import Chapter
    from llama_index_video.store.library import LibraryEntry, TranscriptLine
    from llama_index_video.store.manifest import Manifest
    from llama_index_video.store.recording_names import IndexedSource
    from llama_index_video.summaries.summary import Summary

_READ_ATTEMPTS: Final = 3
"""How many times one read goes round to a version a writer finished as it began."""

MAX_MOMENT_SECONDS: Final = 600.0
"""The longest span a door reads or cuts at once (a clip, an export, a transcript read)."""


def moment_file_name(recording: IndexedSource, start: float, end: float) -> str:
    """The name a door gives a cut of ``recording`` from ``start`` to ``end`` (the page's
    download, an agent's clip): ``team_sync_0005-0015.mp3``; audio keeps its format when
    a cut can be written in it (else M4A, as for sound alone in a video container), video
    becomes MP4."""
    from llama_index_video.media.export import AUDIO_FILE_SUFFIXES
    from llama_index_video.media.probe import sound_only
    from llama_index_video.reader.options import AUDIO_SUFFIXES

    suffix = Path(recording.path).suffix.lower()
    if suffix not in AUDIO_FILE_SUFFIXES:
        audio = suffix in AUDIO_SUFFIXES or sound_only(recording.path)
        suffix = ".m4a" if audio else ".mp4"
    span = f"{schema.format_timestamp(start)}-{schema.format_timestamp(end)}".replace(":", "")
    return f"{Path(recording.name).stem}_{span}{suffix}"


@dataclass(frozen=True)
class Screen:
    """What was on screen in a recording at a time, and what was being said.

    Attributes:
        recording: The recording.
        at: The time asked, in seconds.
        frame_path: The frame on screen then (absolute); None for audio or no frames.
        frame_time: When that frame was taken.
        on_screen: The text read from the screen then, one item per on-screen span.
        said: What was being said then (the transcript units that cover ``at``).
    """

    recording: IndexedSource
    at: float
    frame_path: str | None = None
    frame_time: float | None = None
    on_screen: list[str] = field(default_factory=list)
    said: str | None = None


class ManifestRecordings:
    """``recording``, ``cut`` and ``join``: what the manifest alone answers (no vectors,
    no LlamaIndex), for :class:`Recordings` and :class:`FolderView`."""

    path: Path
    manifest: Manifest

    def recording(self, source: str | Path | IndexedSource) -> IndexedSource:
        """The indexed recording ``source`` names: a path or link as ingested, or a file
        name only one recording has (as labels show it).

        Raises:
            MomentRequestError: no indexed recording has this name, several do, or it
                is not (or no longer) indexed; one line saying what to do.
        """
        from llama_index_video.store.recording_names import IndexedSource, resolve_source

        if isinstance(source, IndexedSource):
            return source
        return resolve_source(self.manifest, str(source))

    def cut(
        self,
        source: str | Path | IndexedSource,
        start: float,
        end: float,
        output: Path,
        *,
        mode: Mode = "auto",
        cues: Sequence[Cue] = (),
        burn: bool = False,
        max_seconds: float = MAX_MOMENT_SECONDS,
    ) -> ExportReport:
        """Write ``[start, end)`` of a recording to ``output`` (its suffix picks the
        format): packets copied from a keyframe close before ``start``, else re-encoded
        (:func:`~llama_index_video.media.export.export_span`).

        Args:
            cues: Subtitles on the recording's timeline, as a soft track (or drawn onto
                the frames with ``burn``).
            max_seconds: The longest span cut.

        Raises:
            MomentRequestError: an unknown recording, a span outside it or over
                ``max_seconds``.
            MediaError: the recording cannot be cut, or the output cannot be written.
        """
        from llama_index_video.media.export import export_span
        from llama_index_video.store.recording_names import check_span

        recording = self.recording(source)
        check_span(recording, start, end, max_seconds=max_seconds)
        return export_span(
            Path(recording.path), start, end, output, mode=mode, cues=cues, burn=burn
        )

    def join(
        self,
        moments: Sequence[tuple[str | Path | IndexedSource, float, float]],
        output: Path,
        *,
        cues: Sequence[Cue] = (),
        burn: bool = False,
        max_seconds: float = MAX_MOMENT_SECONDS,
    ) -> JoinReport:
        """Write the moments ``(recording, start, end)`` one after another into
        ``output``, re-encoded (:func:`~llama_index_video.media.export.join_spans`).

        Args:
            cues: Subtitles on the joined file's timeline.
            max_seconds: The longest the moments may last together.

        Raises:
            MomentRequestError: no moment, an unknown recording, a span outside its
                recording, or moments lasting over ``max_seconds`` together.
            MediaError: a moment cannot be read, or the output cannot be written.
        """
        from llama_index_video.media.export import join_spans
        from llama_index_video.store.recording_names import check_span

        spans = []
        for source, start, end in moments:
            recording = self.recording(source)
            check_span(recording, start, end)
            spans.append((Path(recording.path), start, end))
        if not spans:
            raise MomentRequestError(f"{printable_path(output)}: no moment to write")
        length = sum(end - start for _, start, end in spans)
        if length > max_seconds:
            raise MomentRequestError(
                f"{printable_path(output)}: the moments last {length:.0f} s, over the limit "
                f"of {max_seconds:g} s; ask for fewer or shorter ones"
            )
        return join_spans(spans, output, cues=cues, burn=burn)


class FolderView(ManifestRecordings):
    """An index folder read through its manifest alone: a recording by name and cuts
    of it, with no vector store, model or LlamaIndex loaded (``clip`` starts in a
    fraction of the time a :class:`~llama_index_video.index.VideoIndex` takes to open).

    Raises:
        VideoIndexError: no index was created at ``path``.
    """

    def __init__(self, path: str | Path) -> None:
        from llama_index_video.store.folder import IndexFolder
        from llama_index_video.store.manifest import Manifest

        self.path = Path(path)
        self.folder = IndexFolder(self.path)
        self.folder.require()
        self.manifest = Manifest(self.folder.manifest_file)

    def listed(self) -> list[LibraryEntry] | None:
        """What :meth:`VideoIndex.library` lists, from the manifest's summaries alone;
        None when only the vector store can tell: a content not summarised yet, an
        empty manifest, or no local ``chroma/`` folder (a Chroma server, or lost)."""
        from llama_index_video.store.library import listed

        return listed(self.manifest) if self.folder.chroma.is_dir() else None

    def close(self) -> None:
        self.manifest.close()


class Recordings(ManifestRecordings):
    """``recording``, ``transcript``, ``chapters``, ``screen``, ``cut``, ``join`` and
    ``library`` of an index folder, and a recording's ``summarize`` (see the module
    docstring)."""

    path: Path
    manifest: Manifest
    vector_store: BasePydanticVectorStore

    def check_store(self) -> None:
        """Fail when the store lost rows the manifest lists (``VideoIndex`` checks)."""

    def _follow_writers(self) -> None:
        """Load the vectors afresh when a writer has finished since (``VideoIndex`` does)."""

    def _version_contents(self, *, filtered: bool = True) -> set[str] | None:
        """The contents of the version read, while a writer of another process at work
        adds rows the loaded vectors do not know (a query ``filtered`` by their metadata
        would meet them): queries keep to these. None: no need (``VideoIndex`` tells)."""
        return None

    def _behind_writers(self) -> bool:
        """Whether a writer finished a version after :meth:`_follow_writers` moved to the
        last one (``VideoIndex`` tells)."""
        return False

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """One read of the folder: the vectors brought up to the last finished writer's
        version first, then held (the folder's lease, shared) so that no other thread of
        this process reloads them, nor another process's writer deletes what they hold,
        meanwhile (:mod:`llama_index_video.store.lease`). A writer's commit step that
        ended while the read waited for the lease sends it round again, to the version
        that step finished (twice at most).

        Raises:
            IndexBusyError: a writer at work changed what the read was reading (Chroma's
                ``Error finding id``, or rows it was adding taken for missing ones).
        """
        from llama_index_video.store.lease import folder_lease
        from llama_index_video.store.lock import WriterLock, caused_by_a_writer, read_generation

        lease = folder_lease(self.path)
        nested = lease.reading_here()
        for attempt in range(_READ_ATTEMPTS):  # ends: a fixed number of attempts
            self._follow_writers()
            before = read_generation(self.path)
            with lease.shared():
                if not nested and attempt + 1 < _READ_ATTEMPTS and self._behind_writers():
                    continue
                try:
                    yield
                except Exception as exc:
                    if isinstance(exc, IndexBusyError) or not caused_by_a_writer(exc):
                        raise
                    if before is not None and read_generation(self.path) == before:
                        raise  # no writer touched the folder: the failure is its own
                    holder = WriterLock(self.path).holder() or "a writer"
                    raise IndexBusyError(
                        f"{self.path}: {holder} is writing to this index and changed what "
                        "this read was reading; read again when it has finished"
                    ) from exc
                return

    def library(self) -> list[LibraryEntry]:
        """Every source in the index with its duration, moments, language, speakers,
        status and failure reason (see :mod:`llama_index_video.store.library`)."""
        from llama_index_video.store.library import library

        with self._reading():
            self.check_store()
            return library(self.manifest, self.vector_store)

    def transcript(
        self,
        source: str | Path | IndexedSource,
        *,
        start: float | None = None,
        end: float | None = None,
        max_seconds: float | None = None,
    ) -> list[TranscriptLine]:
        """What was said in a recording, unit by unit in time order, with the times,
        speaker and language stored; with ``start`` and/or ``end`` (seconds), the units
        that overlap that span, checked like :meth:`cut`'s (an open end: the recording's).
        :func:`~llama_index_video.store.transcript_export.render_transcript` writes them
        as SRT, WebVTT, text or JSON.

        Raises:
            MomentRequestError: an unknown recording, a span outside it, or one over
                ``max_seconds``.
        """
        from llama_index_video.store.library import transcript
        from llama_index_video.store.recording_names import check_span

        with self._reading():
            recording = self.recording(source)
            span = _asked_span(recording, start, end)
            if span is not None:
                check_span(recording, *span, max_seconds=max_seconds, instant=True)
            return transcript(self.vector_store, recording.content_hash, start=start, end=end)

    def chapters(
        self,
        source: str | Path | IndexedSource,
        *,
        start: float | None = None,
        end: float | None = None,
    ) -> list[Chapter]:
        """The chapters of a recording in time order (``[]`` for one too short to chapter,
        see :mod:`llama_index_video.chapters`); with ``start`` and/or ``end`` (seconds),
        those that overlap that span (a chapter that only meets it at an end does not: the
        chapter that begins at 08:00 is not one of 04:00-08:00).

        Raises:
            MomentRequestError: an unknown recording.
        """
        from llama_index_video.chapters.nodes import stored_chapters

        with self._reading():
            recording = self.recording(source)
            chapters = stored_chapters(self.vector_store, recording.content_hash)
        return [
            replace(chapter, source=recording.source)
            for chapter in chapters
            if (start is None or chapter.end > start) and (end is None or chapter.start < end)
        ]

    def summarize(
        self,
        source: str | Path | IndexedSource,
        *,
        start: float | None = None,
        end: float | None = None,
        llm: LLM | Literal["claude", "gemini"] | None = None,
    ) -> Summary:
        """A summary of a recording (of ``start``-``end`` seconds when given): an overview
        by chapter, decisions, action items and open questions, each line cited to its
        moment. Without ``llm``, written from the recording's own sentences
        (``extractive``), no model called: see
        :mod:`llama_index_video.summaries.extractive`. With ``llm`` (an LLM, or
        ``"claude"``/``"gemini"`` configured from the environment), the model writes it
        from the chapters and their units; citations that point at no stored moment are
        dropped and counted; cached in the index folder per recording content, span and
        model (:mod:`llama_index_video.summaries.written`). A span's summary carries it
        (``start``/``end``): an open end is the recording's end, or where its last moment
        said ends when the index does not know its length (None if nothing was said
        from ``start`` on).

        Raises:
            MomentRequestError: an unknown recording, a span outside it, or an empty one
                (``end`` not after ``start``).
        """
        from llama_index_video.answering.answerer import make_llm
        from llama_index_video.store.recording_names import check_span
        from llama_index_video.summaries.extractive import extractive_summary
        from llama_index_video.summaries.written import written_summary

        recording = self.recording(source)
        if start is not None and end is not None:
            check_span(recording, start, end)  # a span of no length has nothing to summarize
        lines = self.transcript(recording, start=start, end=end)
        chapters = self.chapters(recording, start=start, end=end)
        model = make_llm(llm) if isinstance(llm, str) else llm
        if model is None:
            summary = extractive_summary(recording.source, lines, chapters)
        else:
            summary = written_summary(
                recording.source,
                lines,
                chapters,
                llm=model,
                cache_key=f"{recording.content_hash}|{start}|{end}",
                cache_dir=self.path,
            )
        span = _asked_span(recording, start, end)
        if span is None:
            return summary
        # Set here, not cached: a summary cached before summaries carried a span says it too.
        if end is None and recording.duration is None:  # a length the index never stored
            said_until = max((line.end for line in lines), default=None)
            return replace(summary, start=span[0], end=said_until)
        return replace(summary, start=span[0], end=span[1])

    def transcript_file(
        self,
        source: str | Path | IndexedSource,
        *,
        fmt: str,
        start: float | None = None,
        end: float | None = None,
    ) -> str:
        """What was said in a recording as a file in ``fmt`` (``srt``, ``vtt``, ``txt`` or
        ``json``): the units :meth:`transcript` returns for the span, with the chapters
        that overlap it where the format has room
        (:mod:`llama_index_video.store.transcript_export`).

        Raises:
            MomentRequestError: an unknown recording or a span outside it.
            ValueError: ``fmt`` is not a transcript format.
        """
        from llama_index_video.store.transcript_export import render_transcript

        recording = self.recording(source)
        lines = self.transcript(recording, start=start, end=end)
        chapters = self.chapters(recording, start=start, end=end)
        return render_transcript(lines, fmt=fmt, source=recording.source, chapters=chapters)

    def screen(self, source: str | Path | IndexedSource, at: float) -> Screen:
        """What was on screen in a recording at ``at`` seconds (the last frame taken by
        then, the on-screen text), and what was being said.

        Raises:
            MomentRequestError: an unknown recording, or a time outside it.
        """
        from llama_index_video.store.library import moments_between
        from llama_index_video.store.media_paths import resolved_path
        from llama_index_video.store.recording_names import check_span

        with self._reading():
            recording = self.recording(source)
            check_span(recording, at, at, instant=True)
            nodes = moments_between(
                self.vector_store, recording.content_hash, at, at, ("frame", "ocr", "transcript")
            )
        nodes.sort(key=lambda n: float(n.metadata[schema.START_S]))
        by_kind = {
            kind: [n for n in nodes if n.metadata[schema.MODALITY] == kind]
            for kind in ("frame", "ocr", "transcript")
        }
        frame = by_kind["frame"][-1] if by_kind["frame"] else None
        return Screen(
            recording,
            at,
            frame_path=resolved_path(str(frame.metadata[schema.IMAGE_PATH]), self.path)
            if frame is not None
            else None,
            frame_time=_seconds(frame.metadata.get(schema.FRAME_TIME)) if frame else None,
            on_screen=[n.get_content() for n in by_kind["ocr"]],
            said=" ".join(n.get_content() for n in by_kind["transcript"]) or None,
        )


def _seconds(value: object) -> float | None:
    return None if value is None or value == "" else float(str(value))


def _asked_span(
    recording: IndexedSource, start: float | None, end: float | None
) -> tuple[float, float] | None:
    """The span ``start``-``end`` asks of ``recording`` (an open start: 0, an open end:
    the recording's), or None for the whole recording."""
    if start is None and end is None:
        return None
    first = 0.0 if start is None else start
    return first, end if end is not None else max(first, recording.duration or first)
