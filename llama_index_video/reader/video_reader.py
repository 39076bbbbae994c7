"""``VideoReader``: video, audio and text files in, timestamped LlamaIndex nodes out.

For a video: speech becomes transcript ``TextNode``s (from subtitles when present,
else from the transcriber), kept frames become ``FrameNode``s (an ``ImageNode``
stored by path), and the text on them, read once per kept frame, becomes ``ocr``
``TextNode``s timed by how long it stayed on screen. Audio files give transcript
nodes only. With a diarizer, each transcript unit also names its speaker
(``SPEAKER_1``...) and never spans a change of speaker. ``.md``/``.txt`` files go
through LlamaIndex's own parsers (:mod:`llama_index_video.reader.documents`), so a
mixed folder indexes together. Node ids derive from the file's bytes, so reading a
file twice, or after moving it, yields the same ids.

How speech becomes transcript units, and the API a Ray ingest uses to transcribe a long
recording on several workers, is :mod:`llama_index_video.reader.speech`.
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Literal

from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import BaseNode

from llama_index_video.errors import (
    MediaError,
    UnsupportedMediaError,
    VideoIndexError,
    one_line_errors,
)
from llama_index_video.media.frames import Frame, FrameSamplingOptions, sample_frames
from llama_index_video.media.names import CLIPS_FOLDER, FRAMES_FOLDER, source_prefix
from llama_index_video.media.probe import MediaInfo, probe
from llama_index_video.ocr import (
    OcrChoice,
    OcrEngine,
    OcrOptions,
    ScreenText,
    ocr_engine,
    read_screen_text,
    screen_text_spans,
)
from llama_index_video.reader import moments
from llama_index_video.reader.clips import ClipOptions, clip_nodes
from llama_index_video.reader.documents import read_text_document
from llama_index_video.reader.ids import content_hash
from llama_index_video.reader.options import (
    DEFAULT_OPTIONS,
    SUPPORTED_SUFFIXES,
    TEXT_SUFFIXES,
    VIDEO_SUFFIXES,
    ReaderOptions,
    check_reading_limits,
)
from llama_index_video.reader.progress import Progress, no_progress
from llama_index_video.reader.speech import SpeechReading
from llama_index_video.reader.units import TranscriptUnit, UnitOptions
from llama_index_video.schema import format_timestamp
from llama_index_video.sources.origin import read_origin
from llama_index_video.speakers.base import Diarizer
from llama_index_video.transcription.base import Speech, Transcriber

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

logger = logging.getLogger(__name__)


_SPOKEN_CHARS_PER_FRAME = 300

"""Called as ``progress(stage, done, total)``; stages ``transcribe``, ``speakers`` and
``frames`` count media seconds."""


@dataclass(frozen=True)
class ReadResult:
    """What reading one file produced: its nodes, plus notes worth telling the user."""

    path: Path
    content_hash: str
    nodes: list[BaseNode]
    duration: float | None = None
    notes: tuple[str, ...] = field(default=())


class VideoReader(SpeechReading, BaseReader):
    """Read video, audio and text files into timestamped nodes.

    Its settings are those of :class:`~llama_index_video.reader.options.ReaderOptions`,
    by the same names and with its defaults (``DEFAULT_OPTIONS``), but for ``clips``
    (``None`` here cuts none) and ``media_dir`` and ``raise_on_error``, the reader's own.

    Args:
        media_dir: Where frame JPEGs are written (the index's media folder).
        transcriber: Speech-to-text backend; defaults to faster-whisper, created on
            first use.
        use_subtitles: Use a sidecar ``.srt``/``.vtt`` or an embedded subtitle stream
            instead of speech recognition when one exists.
        frames: Frame sampling options; ``None`` disables frames.
        ocr: Which engine reads the on-screen text of frames: ``"auto"`` (RapidOCR when
            installed, else none), ``"rapidocr"``, ``"tesseract"`` (each must be
            installed), ``"off"``, or an :class:`~llama_index_video.ocr.OcrEngine`.
            ``True``/``False``/``None`` still work until the next release, deprecated.
        ocr_options: Noise filtering and merging of on-screen text.
        clips: Also cut clips (video windows of videos, audio windows of audio files)
            and return them as ``ClipNode``s, for a multimodal embedding such as
            ``GeminiMultimodalEmbedding``; ``None`` cuts none.
        units: How transcript segments are grouped into retrieval units.
        diarizer: Labels transcript units with who spoke (e.g.
            :class:`~llama_index_video.speakers.ResemblyzerDiarizer`); None: no labels.
        text_chunk_size: Token size of text-document chunks.
        text_chunk_overlap: Token overlap of text-document chunks.
        max_duration: Refuse media longer than this many seconds (``None``: no limit).
        audio_chunk_seconds: Audio is decoded and transcribed this many seconds at a
            time (cut at the quietest moment near the limit), which bounds memory for
            long recordings; a Ray ingest transcribes the chunks of a longer file on
            several workers (:meth:`speech_chunks`).
        audio_lead_in_seconds: Each chunk after the first also carries this many
            seconds of the one before, decoded only for the prompt of the chunk's first
            window (see ``ReaderOptions``); 0: none.
        audio_track: Which audio track is heard, from 1 as players number them; a file
            with fewer tracks fails, naming how many it has.
        split_channels: Hear a stereo track one channel at a time, each labelled as one
            speaker, when its channels hold two voices (:mod:`.channels`).
        raise_on_error: In ``lazy_load_data`` over several files, raise on the first bad
            file instead of logging it and going on with the others (one file always
            raises, so that its caller, e.g. ``SimpleDirectoryReader``, decides).
    """

    def __init__(
        self,
        *,
        media_dir: str | Path = "video_index/media",
        transcriber: Transcriber | None = DEFAULT_OPTIONS.transcriber,
        use_subtitles: bool = DEFAULT_OPTIONS.use_subtitles,
        frames: FrameSamplingOptions | None = DEFAULT_OPTIONS.frames,
        ocr: OcrEngine | OcrChoice = DEFAULT_OPTIONS.ocr,
        ocr_options: OcrOptions = DEFAULT_OPTIONS.ocr_options,
        clips: ClipOptions | None = None,
        units: UnitOptions = DEFAULT_OPTIONS.units,
        diarizer: Diarizer | None = DEFAULT_OPTIONS.diarizer,
        text_chunk_size: int = DEFAULT_OPTIONS.text_chunk_size,
        text_chunk_overlap: int = DEFAULT_OPTIONS.text_chunk_overlap,
        max_duration: float | None = DEFAULT_OPTIONS.max_duration,
        audio_chunk_seconds: float = DEFAULT_OPTIONS.audio_chunk_seconds,
        audio_lead_in_seconds: float = DEFAULT_OPTIONS.audio_lead_in_seconds,
        audio_track: int = DEFAULT_OPTIONS.audio_track,
        split_channels: bool = DEFAULT_OPTIONS.split_channels,
        raise_on_error: bool = False,
    ) -> None:
        check_reading_limits(
            max_duration=max_duration,
            audio_chunk_seconds=audio_chunk_seconds,
            audio_lead_in_seconds=audio_lead_in_seconds,
            audio_track=audio_track,
            text_chunk_size=text_chunk_size,
            text_chunk_overlap=text_chunk_overlap,
        )
        self.media_dir = Path(media_dir)
        self.use_subtitles = use_subtitles
        self.frames = frames
        self.ocr: OcrEngine | None = ocr_engine(_undeprecated(ocr))
        self.ocr_options = ocr_options
        self.clips = clips
        self.units = units
        self.diarizer = diarizer
        self.text_chunk_size = text_chunk_size
        self.text_chunk_overlap = text_chunk_overlap
        self.max_duration = max_duration
        self.audio_chunk_seconds = audio_chunk_seconds
        self.audio_lead_in_seconds = audio_lead_in_seconds
        self.audio_track = audio_track
        self.split_channels = split_channels
        self.raise_on_error = raise_on_error
        self._transcriber = transcriber

    @classmethod
    def from_options(
        cls, options: ReaderOptions, *, media_dir: str | Path, clips: bool = False
    ) -> VideoReader:
        """The reader :class:`~llama_index_video.index.VideoIndex` builds for itself.

        Args:
            options: What to read and how.
            media_dir: Where frames and clips are written.
            clips: Cut clips (with ``options.clips``, or the default windows): for an
                embedding that embeds them natively.
        """
        settings = {f.name: getattr(options, f.name) for f in fields(options)}  # the same names
        settings["clips"] = (options.clips or ClipOptions()) if clips else None
        return cls(media_dir=media_dir, **settings)

    def lazy_load_data(  # type: ignore[override]
        self,
        file_paths: str | PurePath | Iterable[str | PurePath],
        extra_info: Mapping[str, object] | None = None,
        fs: AbstractFileSystem | None = None,
    ) -> Iterator[BaseNode]:
        """Yield the nodes of each file in turn.

        ``BaseReader``'s contract, as ``SimpleDirectoryReader(file_extractor=...)`` calls
        it: ``load_data(file, extra_info=..., fs=...)``.

        Args:
            file_paths: One file, or several.
            extra_info: Your metadata for every node (e.g. ``SimpleDirectoryReader``'s
                ``file_metadata``): merged into each node, flat (other values become
                JSON text), hidden from the embedding model; the reader's own keys win.
            fs: Only the local file system: media is decoded from local files.

        Raises:
            VideoIndexError: a single file cannot be read (its caller decides what to do,
                e.g. ``SimpleDirectoryReader(raise_on_error=...)``); with several files,
                only when ``raise_on_error`` is set: otherwise a bad file is logged (one
                line naming the file and the reason) and the others are read.
        """
        if fs is not None and not _is_local(fs):
            raise VideoIndexError(
                f"VideoReader reads local files only, not from {type(fs).__name__}: "
                "copy the files to a local folder first"
            )
        single = isinstance(file_paths, (str, PurePath))
        if isinstance(file_paths, (str, PurePath)):
            paths = [Path(file_paths)]
        else:
            paths = [Path(path) for path in file_paths]
        for path in paths:
            try:
                nodes = self.read(path).nodes
            except VideoIndexError as exc:
                if self.raise_on_error or single:
                    raise
                logger.warning("skipped %s", exc)
                continue
            for node in nodes:
                yield _with_user_metadata(node, extra_info or {})

    def read(
        self,
        path: str | Path,
        *,
        file_hash: str | None = None,
        progress: Progress | None = None,
        speech: Speech | None = None,
    ) -> ReadResult:
        """Read one file.

        Args:
            path: A video, audio, ``.md`` or ``.txt`` file.
            file_hash: Its content hash, if the caller already computed it.
            progress: Told how far each stage has got.
            speech: What :meth:`transcribe_chunk` heard in each of :meth:`speech_chunks`,
                joined (e.g. transcribed on several workers): used where the file would be
                transcribed, instead of transcribing it here.

        Raises:
            MediaError: the file is missing, empty, of an unsupported type, or not
                decodable; the message names the file and the reason.
            VideoIndexError: transcription or another stage failed.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES:
            raise UnsupportedMediaError(path, f"unsupported file type '{suffix or path.name}'")
        if not path.is_file():
            raise MediaError(path, "file not found")
        try:
            source = moments.SourceFile(
                path, file_hash or content_hash(path), origin=read_origin(path)
            )
        except OSError as exc:
            raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from exc
        if suffix in TEXT_SUFFIXES:
            nodes = read_text_document(
                source,
                chunk_size=self.text_chunk_size,
                chunk_overlap=self.text_chunk_overlap,
                progress=progress or no_progress,
            )
            return ReadResult(path, source.content_hash, nodes)
        with one_line_errors(path):
            return self._read_media(
                source,
                is_video=suffix in VIDEO_SUFFIXES,
                progress=progress or no_progress,
                speech=speech,
            )

    def _read_media(
        self,
        source: moments.SourceFile,
        *,
        is_video: bool,
        progress: Progress,
        speech: Speech | None,
    ) -> ReadResult:
        info = probe(source.path)
        if self.max_duration is not None and info.duration > self.max_duration:
            raise MediaError(
                source.path,
                f"is {format_timestamp(info.duration)} long, over the limit of "
                f"{format_timestamp(self.max_duration)} (raise max_duration to index it)",
            )
        notes: list[str] = []
        track = self._track_note(info)
        if track is not None:
            notes.append(track)
        if info.declared_duration is not None:
            notes.append(cut_short_note(info.duration, info.declared_duration))
        if is_video and not info.has_video:
            notes.append("no video stream: transcript only")
        reads_screens = info.has_video and self.frames is not None
        if reads_screens and info.has_audio:
            self._speech_backend_before_threads()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="screen") as pool:
            stop = threading.Event()
            screens = (
                pool.submit(self._read_screens, source, stop, end=None, duration=info.duration)
                if reads_screens
                else None
            )
            try:
                units, language = self._transcript(info, notes, progress, speech)
            except BaseException:
                stop.set()
                raise
            note = "; ".join(notes) or None
            nodes: list[BaseNode] = list(
                moments.transcript_nodes(source, units, language=language, note=note)
            )
            if screens is not None:
                shown = self._frame_nodes(
                    source, info.duration, units, note, screens.result(), progress
                )
                moments.link_moments(nodes, shown)
                nodes.extend(shown)
        if self.clips is not None:
            nodes.extend(self._clip_nodes(self.clips, source, info, units, note, progress))
        if not nodes and not (info.has_audio and (reads_screens or not info.has_video)):
            # Nothing to index. Sound with no speech in it, and no pictures or pictures
            # read, is a silent recording: indexed with no moments and its note (a
            # re-ingest skips it). Pictures left unread (frames off), or no sound at all,
            # fail, so that another ingest reads the file again.
            unread = ["frames are off"] if info.has_video and not reads_screens else []
            raise MediaError(source.path, "; ".join([*notes, *unread]) or "nothing to index")
        for text in notes:
            logger.info("%s: %s", source.path, text)
        return ReadResult(
            source.path, source.content_hash, nodes, duration=info.duration, notes=tuple(notes)
        )

    def _clip_nodes(
        self,
        options: ClipOptions,
        source: moments.SourceFile,
        info: MediaInfo,
        units: list[TranscriptUnit],
        note: str | None,
        progress: Progress,
    ) -> list[BaseNode]:
        """Video clips of a video (audio clips of an audio file) for native embedding."""
        from llama_index_video.media.clips import cut_clips

        modality: Literal["video", "audio"] = "video" if info.has_video else "audio"
        seconds, overlap = options.window(modality, has_audio=info.has_audio)
        clips = []
        for clip in cut_clips(
            source.path,
            out_dir=self.media_dir / CLIPS_FOLDER,
            content_hash=source.content_hash,
            modality=modality,
            max_seconds=seconds,
            overlap_seconds=overlap,
            info=info,
        ):
            progress("clips", clip.end, info.duration)
            clips.append(clip)
        return list(clip_nodes(source, clips, units=units, note=note))

    def screen_nodes(
        self,
        source: moments.SourceFile,
        units: list[TranscriptUnit],
        *,
        start: float,
        end: float,
    ) -> list[BaseNode]:
        """The frames kept from ``start`` to ``end`` seconds of a video still being
        written, then the ``ocr`` nodes of the text they show ([] without frames, or for
        audio): what ``ingest --live`` stores beside a chunk's ``units``.

        Raises:
            MediaError: the span's video cannot be decoded.
        """
        if self.frames is None:
            return []
        try:
            reads = self._read_screens(source, threading.Event(), start=start, end=end)
        except UnsupportedMediaError:  # no video stream
            return []
        return self._frame_nodes(source, end, units, None, reads, no_progress)

    def _read_screens(
        self,
        source: moments.SourceFile,
        stop: threading.Event,
        *,
        start: float = 0.0,
        end: float | None,
        duration: float | None = None,
    ) -> list[tuple[Frame, ScreenText]]:
        """Each kept frame with the text it shows (none without OCR), until ``stop`` is set.

        Runs in a thread beside speech recognition: CTranslate2 keeps about one core
        busy on 2 cores, so frames are decoded and read on the other one.
        """
        reads: list[tuple[Frame, ScreenText]] = []
        for frame in sample_frames(
            source.path,
            out_dir=self.media_dir / FRAMES_FOLDER,
            name_prefix=source_prefix(source.content_hash),
            options=self.frames,
            duration=duration,
            start=start,
            end=end,
        ):
            if stop.is_set():
                break
            screen = ScreenText()
            if self.ocr is not None:
                screen = read_screen_text(self.ocr, frame.path, self.ocr_options)
            reads.append((frame, screen))
        return reads

    def _frame_nodes(
        self,
        source: moments.SourceFile,
        duration: float,
        units: list[TranscriptUnit],
        note: str | None,
        reads: list[tuple[Frame, ScreenText]],
        progress: Progress,
    ) -> list[BaseNode]:
        """A frame node per kept frame, then the ``ocr`` nodes of the text they showed."""
        nodes: list[BaseNode] = []
        for frame, screen in reads:
            progress("frames", frame.end, duration)
            spoken = moments.spoken_between(units, frame.time, frame.end, _SPOKEN_CHARS_PER_FRAME)
            nodes.append(
                moments.frame_node(
                    source, frame, spoken=spoken, screen_text=screen.inline, note=note
                )
            )
        spans = screen_text_spans(reads, same_text_ratio=self.ocr_options.same_text_ratio)
        nodes.extend(
            moments.ocr_nodes(source, spans, max_chars=self.ocr_options.max_chars, note=note)
        )
        return nodes


_DEPRECATED_OCR: dict[bool | None, OcrChoice] = {None: "auto", True: "rapidocr", False: "off"}


def _undeprecated(ocr: OcrEngine | OcrChoice | bool | None) -> OcrEngine | OcrChoice:
    """``ocr`` as a choice; 0.1.0's ``True``/``False``/``None`` with a warning, for one release."""
    if ocr is None or isinstance(ocr, bool):
        choice = _DEPRECATED_OCR[ocr]
        warnings.warn(
            f"VideoReader(ocr={ocr}) is deprecated and will be removed in the next release; "
            f"pass ocr={choice!r}",
            DeprecationWarning,
            stacklevel=3,
        )
        return choice
    return ocr


def _is_local(fs: AbstractFileSystem) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    return "file" in protocol or "local" in protocol


def _with_user_metadata(node: BaseNode, extra_info: Mapping[str, object]) -> BaseNode:
    """``node`` with the caller's metadata added under the reader's own keys."""
    added = {key: _flat(value) for key, value in extra_info.items() if key not in node.metadata}
    if added:
        node.metadata.update(added)
        node.excluded_embed_metadata_keys.extend(
            k for k in added if k not in node.excluded_embed_metadata_keys
        )
    return node


def _flat(value: object) -> str | int | float | None:
    """A metadata value LlamaIndex and vector stores accept (str, int, float, None)."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    return json.dumps(value, default=str, sort_keys=True)


def cut_short_note(duration: float, declared: float) -> str:
    """The note on a file whose packets end before the duration its header declares."""
    return (
        f"cut short: it ends at {format_timestamp(duration)} of the "
        f"{format_timestamp(declared)} its header declares"
    )
