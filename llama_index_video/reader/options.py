"""``ReaderOptions``: how a :class:`~llama_index_video.index.VideoIndex` reads files.

The index builds its own :class:`~llama_index_video.reader.video_reader.VideoReader`
from these, because two settings are the index's to decide, not the caller's: where
frames and clips are written (the index folder's ``media/``), and whether clips are cut
at all (only when the index's embedding embeds them natively, which only the index
knows once it has read the embedding stored in its folder). Everything else a
``VideoReader`` takes is here, under the same name (a test keeps the two in step).

The options are validated on construction and never change; building the reader from
them, and importing the media decoder, waits until the index first ingests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llama_index_video.media.frames import FrameSamplingOptions
from llama_index_video.ocr import OcrChoice, OcrEngine, OcrOptions, check_ocr_choice
from llama_index_video.reader.clips import ClipOptions
from llama_index_video.reader.units import UnitOptions
from llama_index_video.speakers.base import Diarizer
from llama_index_video.transcription.base import Transcriber

VIDEO_SUFFIXES = frozenset(
    {".mp4", ".mov", ".mkv", ".webm", ".avi", ".m4v", ".mpg", ".mpeg", ".wmv", ".asf", ".3gp"}
    | {".3g2", ".flv", ".ogv", ".ts", ".mts", ".m2ts", ".vob"}
)
AUDIO_SUFFIXES = frozenset(
    {".mp3", ".wav", ".m4a", ".flac", ".ogg", ".opus", ".aac", ".wma", ".amr", ".aif", ".aiff"}
    | {".oga", ".mka", ".caf", ".weba"}
)
TEXT_SUFFIXES = frozenset({".md", ".txt"})
SUPPORTED_SUFFIXES = VIDEO_SUFFIXES | AUDIO_SUFFIXES | TEXT_SUFFIXES
"""The files the reader reads, by suffix (lower case). The bundled FFmpeg decodes a file
by its content, not its name: one with a wrong media suffix is read as what it is."""


@dataclass(frozen=True, kw_only=True)
class ReaderOptions:
    """What a ``VideoIndex`` reads from each file, and how.

    Attributes:
        transcriber: Speech-to-text backend, e.g. ``FasterWhisperTranscriber(model="base",
            language="de")``; None: faster-whisper ``tiny.en``, created on first use.
        use_subtitles: Use a sidecar ``.srt``/``.vtt`` or an embedded subtitle stream
            instead of speech recognition when one exists.
        frames: Frame sampling options; None samples no frames.
        ocr: Which engine reads the on-screen text of frames: ``"auto"`` (RapidOCR when
            installed, else none), ``"rapidocr"``, ``"tesseract"``, ``"off"``, or an
            :class:`~llama_index_video.ocr.OcrEngine` of your own.
        ocr_options: Noise filtering and merging of on-screen text.
        clips: Windows of the video and audio clips cut for a multimodal embedding
            (e.g. ``EmbeddingSpec(backend="gemini")``); None: the defaults. An index
            whose embedding reads text only cuts no clips and refuses this setting.
        units: How transcript segments are grouped into retrieval units.
        diarizer: Labels transcript units with who spoke; None: no labels.
        text_chunk_size: Token size of text-document chunks.
        text_chunk_overlap: Token overlap of text-document chunks.
        max_duration: Refuse media longer than this many seconds (None: no limit).
        audio_chunk_seconds: Audio is decoded and transcribed this many seconds at a
            time, which bounds memory for long recordings; a Ray ingest transcribes the
            chunks of a longer file on several workers.
        audio_lead_in_seconds: Each chunk after the first also carries this many
            seconds of the one before, which faster-whisper decodes only to prompt the
            chunk's first window with what was said just before it, as one long decode
            would (chunks stay independent: Ray writes what a local ingest writes); 0:
            each chunk's prompt starts empty. Off by default: 60 s wrote fewer wrong words
            on an hour of real speech (5.5 -> 5.4 %) but heard 2 fewer planted facts on a
            synthetic 20 minutes (docs/evaluation.md, an hour of real speech).
        audio_track: Which audio track is heard (transcribed, speakers), from 1 as
            players number them: a file with several (two languages, a commentary) is
            read from the first unless told; a file with fewer tracks fails (one line).
        split_channels: Hear a stereo track one channel at a time, each channel's speech
            labelled as one speaker (``SPEAKER_1`` left), when its channels hold two
            voices (a call recorder's file; see :mod:`.channels`); False: always mixed.

    Raises:
        ValueError: a limit is out of range or ``ocr`` names no engine.
        TypeError: ``ocr`` is neither a name nor an engine.
    """

    transcriber: Transcriber | None = None
    use_subtitles: bool = True
    frames: FrameSamplingOptions | None = field(default_factory=FrameSamplingOptions)
    ocr: OcrEngine | OcrChoice = "auto"
    ocr_options: OcrOptions = field(default_factory=OcrOptions)
    clips: ClipOptions | None = None
    units: UnitOptions = field(default_factory=UnitOptions)
    diarizer: Diarizer | None = None
    text_chunk_size: int = 512
    text_chunk_overlap: int = 64
    max_duration: float | None = None
    audio_chunk_seconds: float = 600.0
    audio_lead_in_seconds: float = 0.0
    audio_track: int = 1
    split_channels: bool = True

    def __post_init__(self) -> None:
        check_reading_limits(
            max_duration=self.max_duration,
            audio_chunk_seconds=self.audio_chunk_seconds,
            audio_lead_in_seconds=self.audio_lead_in_seconds,
            audio_track=self.audio_track,
            text_chunk_size=self.text_chunk_size,
            text_chunk_overlap=self.text_chunk_overlap,
        )
        check_ocr_choice(self.ocr)


def check_reading_limits(
    *,
    max_duration: float | None,
    audio_chunk_seconds: float,
    audio_lead_in_seconds: float,
    audio_track: int,
    text_chunk_size: int,
    text_chunk_overlap: int,
) -> None:
    """The checks ``ReaderOptions`` and ``VideoReader`` share.

    Raises:
        ValueError: naming the setting and its allowed range.
    """
    if max_duration is not None and max_duration <= 0:
        raise ValueError(f"max_duration must be > 0, got {max_duration}")
    if audio_chunk_seconds < 30:
        raise ValueError(f"audio_chunk_seconds must be >= 30, got {audio_chunk_seconds}")
    if not 0 <= audio_lead_in_seconds <= audio_chunk_seconds:
        raise ValueError(
            f"audio_lead_in_seconds must be between 0 and audio_chunk_seconds "
            f"({audio_chunk_seconds}), got {audio_lead_in_seconds}"
        )
    if audio_track < 1:
        raise ValueError(f"audio_track counts from 1, got {audio_track}")
    if not 0 <= text_chunk_overlap < text_chunk_size:
        raise ValueError("need 0 <= text_chunk_overlap < text_chunk_size")


DEFAULT_OPTIONS = ReaderOptions()
"""The defaults, which ``VideoReader``'s keywords take too (one source for both)."""
