"""Reading speech: subtitles or transcription, speakers, and the API that spreads it.

:class:`SpeechReading` is the part of :class:`~llama_index_video.reader.video_reader.VideoReader`
that turns a file's sound into transcript units: subtitles when usable (and the speech
their cues do not cover, :mod:`.uncovered`), else the transcriber over bounded audio
chunks, with speaker labels when there is a diarizer.

Its public methods are the distributed-speech API a Ray ingest uses
(:mod:`llama_index_video.executor.ray`): :meth:`SpeechReading.speech_chunks` cuts a long
recording into chunks, :meth:`SpeechReading.transcribe_chunk` transcribes one anywhere,
and ``Speech.joined`` of the results, handed to ``VideoReader.read(path, speech=...)``,
gives the nodes a plain read gives.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from llama_index_video.errors import (
    MissingDependencyError,
    TranscriptionError,
    UnsupportedMediaError,
    one_line_errors,
)
from llama_index_video.media.audio import AudioChunk, iter_audio_chunks
from llama_index_video.media.probe import MediaInfo, probe
from llama_index_video.reader.options import AUDIO_SUFFIXES, VIDEO_SUFFIXES
from llama_index_video.reader.progress import Progress, no_progress
from llama_index_video.reader.units import TranscriptUnit, UnitOptions, build_units
from llama_index_video.schema import format_timestamp
from llama_index_video.speakers.base import Diarizer, SpeakerTimeline, speaker_name
from llama_index_video.transcription.base import (
    DroppedSpeech,
    Segment,
    Speech,
    Transcriber,
    audio_from,
)
from llama_index_video.transcription.openmp import import_faster_whisper
from llama_index_video.transcription.skips import UNHEARD

logger = logging.getLogger(__name__)

NO_SPEECH = "no speech heard"
"""The note of a recording whose sound holds no speech (nothing transcribed)."""
HEARD_TRACK = "audio tracks: heard"
"""In the note of a file with several audio tracks, what precedes the one heard."""


def heard_track(notes: str) -> int:
    """The audio track (from 1) a file's speech and speakers were read from, as its stored
    ``notes`` name it (:meth:`SpeechReading._track_note`); 1 when they name none (a file
    with one track)."""
    found = re.search(rf"{HEARD_TRACK} track (\d+) ", notes)
    return int(found[1]) if found else 1


class SpeechReading:
    """Transcript units of a file's speech (see the module docstring).

    The reader's settings it reads are set by ``VideoReader.__init__``.
    """

    use_subtitles: bool
    units: UnitOptions
    diarizer: Diarizer | None
    max_duration: float | None
    audio_chunk_seconds: float
    audio_lead_in_seconds: float
    audio_track: int
    split_channels: bool
    _transcriber: Transcriber | None

    @property
    def transcriber(self) -> Transcriber:
        """The speech backend, created on first use."""
        if self._transcriber is None:
            from llama_index_video.transcription.faster import FasterWhisperTranscriber

            self._transcriber = FasterWhisperTranscriber()
        return self._transcriber

    def speech_chunks(self, path: str | Path) -> Iterator[AudioChunk] | None:
        """The audio chunks :meth:`read` would transcribe one after another, if several.

        For spreading a long recording over several workers: each chunk goes through
        :meth:`transcribe_chunk` (anywhere), ``Speech.joined`` of the results in chunk
        order goes to ``read(path, speech=...)``, and the nodes are those a plain
        :meth:`read` gives, since it transcribes these very chunks the same way.

        Returns:
            The chunks, decoded as they are iterated (cut at quiet moments, at most
            ``audio_chunk_seconds`` each); None when reading would transcribe one chunk
            or none: a text file, media no longer than ``audio_chunk_seconds``, without
            sound, over ``max_duration``, with usable subtitles (reading transcribes what
            they do not cover), with two voices on two channels (:mod:`.channels`), or
            that cannot be probed (reading it says why).
        """
        path = Path(path)
        if path.suffix.lower() not in VIDEO_SUFFIXES | AUDIO_SUFFIXES or not path.is_file():
            return None
        try:
            info = probe(path)
            subtitled = self.use_subtitles and _has_subtitle_units(path, self.units)
        except Exception:
            return None
        too_long = self.max_duration is not None and info.duration > self.max_duration
        if subtitled or too_long or not info.has_audio:
            return None
        if info.duration <= self.audio_chunk_seconds or self._two_voices(info) is not None:
            return None
        return self._audio_chunks(info, lead_in_seconds=self.audio_lead_in_seconds)

    def transcribe_chunk(
        self,
        chunk: AudioChunk,
        *,
        source: Path,
        duration: float | None = None,
        progress: Progress | None = None,
    ) -> Speech:
        """Transcribe one of :meth:`speech_chunks`; times come on the source's timeline.

        Args:
            chunk: The chunk.
            source: The file it came from (named in errors).
            duration: The file's duration, for ``progress``.
            progress: Told how far transcription got, in source seconds.

        Raises:
            VideoIndexError: transcription failed; the message names ``source``.
        """
        total = chunk.end if duration is None else duration
        report = progress or no_progress
        segments: list[Segment] = []
        with one_line_errors(source), audio_from(chunk.start, before=chunk.lead_in):
            transcription = self.transcriber.transcribe(chunk.samples, source=source)
            for segment in transcription.segments:
                segments.append(_shifted(segment, chunk.start))
                report("transcribe", min(segments[-1].end, total), total)
        report("transcribe", min(chunk.end, total), total)
        dropped = tuple(
            replace(d, start=d.start + chunk.start, end=d.end + chunk.start)
            for d in transcription.dropped
        )
        return Speech(tuple(segments), transcription.info.language, dropped)

    def _speech_backend_before_threads(self) -> None:
        """Build the speech backend now, before this file's screen thread starts.

        The default one imports faster-whisper, whose engine reads its thread settings
        from the environment as it loads (:mod:`~llama_index_video.transcription.openmp`
        sets them for that moment), and no other thread should read the environment while
        it changes. Subtitles may leave the backend unused, so a missing one is not an
        error yet: transcribing raises it.
        """
        with suppress(MissingDependencyError):
            self._transcriber = self.transcriber
            import_faster_whisper()  # the VAD's too: speech subtitles leave out, speakers

    def _track_note(self, info: MediaInfo) -> str | None:
        """Which audio track is heard, when the file has several (a second language, a
        commentary): a note naming each, so none is left out silently.

        Raises:
            UnsupportedMediaError: the file has fewer audio tracks than ``audio_track``.
        """
        tracks = info.audio_tracks
        if not tracks or (len(tracks) == 1 and self.audio_track == 1):
            return None
        if self.audio_track > len(tracks):
            pick = (
                "read it without audio_track (--audio-track)"
                if len(tracks) == 1
                else f"pick one of 1-{len(tracks)} (audio_track, --audio-track)"
            )
            raise UnsupportedMediaError(
                info.path,
                f"has {len(tracks)} audio track{'s' if len(tracks) > 1 else ''}, no track "
                f"{self.audio_track}: {pick}",
            )
        heard = tracks[self.audio_track - 1]
        others = ", ".join(str(track) for track in tracks if track is not heard)
        return (
            f"{len(tracks)} {HEARD_TRACK} {heard}, not {others}; "
            f"audio_track (--audio-track) picks another"
        )

    def _transcript(
        self, info: MediaInfo, notes: list[str], progress: Progress, speech: Speech | None
    ) -> tuple[list[TranscriptUnit], str | None]:
        if self.use_subtitles:
            from llama_index_video.transcription.subtitles import usable_subtitles

            transcription, note = usable_subtitles(info.path)
            if transcription is None and note:
                notes.append(note)
            if transcription is not None:
                cues = list(transcription.segments)
                if next(build_units(cues, self.units), None) is not None:
                    shown = note or "transcript from subtitles"
                    heard = self._uncovered(info, cues, shown, notes, progress)
                    segments = sorted([*cues, *heard.segments], key=lambda s: s.start)
                    units = self._units(info, segments, notes, progress)
                    return units, transcription.info.language or heard.language
                logger.info("%s: subtitles are empty; transcribing", info.path)
        if not info.has_audio:
            notes.append("no audio track: frames only")
            return [], None
        if speech is None:
            voices = self._two_voices(info)
            if voices is not None:
                return self._by_channel(info, voices, notes, progress)
            speech = self._heard(info, progress)
        units = self._units(info, speech.segments, notes, progress)
        if not units:
            notes.append(NO_SPEECH)
        if speech.dropped:
            notes.append(dropped_note(speech.dropped))
        return units, speech.language

    def _heard(self, info: MediaInfo, progress: Progress, *, channel: int | None = None) -> Speech:
        """The file's speech: the channels mixed to one, or ``channel`` alone."""
        return Speech.joined(
            self.transcribe_chunk(
                chunk, source=info.path, duration=info.duration, progress=progress
            )
            for chunk in self._audio_chunks(
                info, channel=channel, lead_in_seconds=self.audio_lead_in_seconds
            )
        )

    def _two_voices(self, info: MediaInfo) -> float | None:
        """The loudness correlation of the heard track's two channels when they hold two
        voices, one each (:mod:`.channels`); None to hear them mixed."""
        if not self.split_channels or not 1 <= self.audio_track <= len(info.audio_tracks):
            return None
        from llama_index_video.reader.channels import two_voices

        return two_voices(info, track=self.audio_track)

    def _by_channel(
        self, info: MediaInfo, correlation: float, notes: list[str], progress: Progress
    ) -> tuple[list[TranscriptUnit], str | None]:
        """Units of each channel heard alone, labelled with its speaker (``SPEAKER_1``
        left, ``SPEAKER_2`` right), in time order, each channel's words only where it is
        the louder one (the other voice leaking in left out; :mod:`.channels`)."""
        from llama_index_video.reader.channels import (
            BY_CHANNEL_NOTE,
            channel_loudness,
            channel_speaker,
            louder_only,
        )

        units: list[TranscriptUnit] = []
        heard: list[Speech] = []
        loudness = [
            channel_loudness(info, track=self.audio_track, channel=channel) for channel in (0, 1)
        ]
        for channel in (0, 1):
            speech = self._heard(info, progress, channel=channel)
            label = channel_speaker(channel)
            own = louder_only(speech.segments, loudness[channel], loudness[1 - channel])
            units.extend(build_units(own, self.units, speaker_at=lambda *_, of=label: of))
            heard.append(speech)
        units.sort(key=lambda unit: unit.start)
        both = Speech.joined(heard)
        instead = f", not by {self.diarizer.name}" if self.diarizer is not None else ""
        notes.append(
            f"{BY_CHANNEL_NOTE} (loudness correlation {correlation:.2f}): each heard "
            f"alone as a speaker{instead}, {speaker_name(1)} left, {speaker_name(2)} right "
            f"(--mix-channels mixes them)"
        )
        if not units:
            notes.append(NO_SPEECH)
        if both.dropped:
            notes.append(dropped_note(sorted(both.dropped, key=lambda d: d.start)))
        return units, both.language

    def _uncovered(
        self,
        info: MediaInfo,
        cues: Sequence[Segment],
        shown: str,
        notes: list[str],
        progress: Progress,
    ) -> Speech:
        """The speech the subtitle ``cues`` (``shown``: the note naming them) do not
        cover, transcribed (:mod:`.uncovered`); the note says where the transcript came
        from."""
        if not info.has_audio:
            notes.append(shown)
            return Speech()
        from llama_index_video.reader.uncovered import covered, uncovered_speech

        cover = covered(cues)
        spans: list[tuple[float, float]] = []

        def pieces() -> Iterator[AudioChunk]:
            for chunk in self._audio_chunks(info):
                for piece in uncovered_speech(chunk, cover):
                    spans.append((piece.start, piece.end))
                    yield piece

        try:
            import_faster_whisper()  # the VAD's
            speech = Speech.joined(
                self.transcribe_chunk(
                    piece, source=info.path, duration=info.duration, progress=progress
                )
                for piece in pieces()
            )
        except MissingDependencyError as exc:
            notes.append(f"{shown}; speech outside the subtitles not looked for: {exc}")
            return Speech()
        except TranscriptionError as exc:  # e.g. another language and no model for it
            logger.warning("%s: speech outside the subtitles not transcribed: %s", info.path, exc)
            notes.append(f"{shown}; {_spans_note(spans)}, outside them, not transcribed: {exc}")
            return Speech()
        if speech.segments:
            shown += f" and from {_spans_note(spans)}, which they do not cover"
        notes.append(shown)
        if speech.dropped:
            notes.append(dropped_note(speech.dropped))
        return speech

    def _units(
        self, info: MediaInfo, segments: Iterable[Segment], notes: list[str], progress: Progress
    ) -> list[TranscriptUnit]:
        """Retrieval units, labelled with speakers when there is a diarizer and sound."""
        if self.diarizer is None or not info.has_audio:
            return list(build_units(segments, self.units))
        chunks = self._audio_chunks(info)

        def reported() -> Iterator[AudioChunk]:
            for chunk in chunks:
                yield chunk
                progress("speakers", min(chunk.end, info.duration), info.duration)

        speakers = SpeakerTimeline(self.diarizer.diarize(reported(), source=info.path))
        units = list(build_units(segments, self.units, speaker_at=speakers.speaker_at))
        heard = {unit.speaker for unit in units if unit.speaker}
        if units:
            notes.append(f"{len(heard)} speaker(s) by {self.diarizer.name}")
        return units

    def _audio_chunks(
        self, info: MediaInfo, *, channel: int | None = None, lead_in_seconds: float = 0.0
    ) -> Iterator[AudioChunk]:
        return iter_audio_chunks(
            info.path,
            chunk_seconds=self.audio_chunk_seconds,
            track=self.audio_track,
            channel=channel,
            lead_in_seconds=lead_in_seconds,
            duration=info.duration,
        )


def dropped_note(dropped: Sequence[DroppedSpeech], *, listed: int = 5) -> str:
    """The note that tells the user which speech is missing from the transcript, and why:
    a repetition loop, or speech the model wrote no words for (:mod:`..transcription.skips`)."""
    why: dict[str, list[DroppedSpeech]] = {}
    for d in dropped:
        looped = "the model wrote a repetition loop there, also when decoded again"
        why.setdefault(UNHEARD if d.reason == UNHEARD else looped, []).append(d)
    return "; ".join(
        f"{_spans_note([(d.start, d.end) for d in spans], listed=listed)} left out of the "
        f"transcript: {reason}"
        for reason, spans in why.items()
    )


def _spans_note(spans: Sequence[tuple[float, float]], *, listed: int = 5) -> str:
    shown = ", ".join(f"{format_timestamp(a)}-{format_timestamp(b)}" for a, b in spans[:listed])
    more = f" and {len(spans) - listed} more" if len(spans) > listed else ""
    return f"speech at {shown}{more}"


def _has_subtitle_units(path: Path, options: UnitOptions) -> bool:
    """Whether reading ``path`` takes its transcript from subtitles (not from speech)."""
    from llama_index_video.transcription.subtitles import usable_subtitles

    transcription, _ = usable_subtitles(path)
    return (
        transcription is not None
        and next(build_units(transcription.segments, options), None) is not None
    )


def _shifted(segment: Segment, offset: float) -> Segment:
    if not offset:
        return segment
    return replace(
        segment,
        start=segment.start + offset,
        end=segment.end + offset,
        words=tuple(replace(w, start=w.start + offset, end=w.end + offset) for w in segment.words),
    )
