"""Cut a moment of a recording into a file of its own, with PyAV (no ffmpeg program).

Stream copy is tried first: packets are copied unchanged from the last keyframe at or
before the start, so the file begins up to ``copy_slack`` seconds early (never more
than one GOP) and costs no decoding. When no keyframe is that close, or the output's
container cannot hold the source's codecs (H.264 in WebM), the moment is re-encoded
from exactly the start: H.264 and AAC where the container holds them, else its own
codecs (WebM: VP9 and Opus). The :class:`ExportReport` says which happened and the span
the file really holds. A re-encoded moment starts with the picture on screen at the start
and its sound to the sample (the decoded frame holding the start is cut there).

Audio sources are re-encoded (a copy is still made when asked, ``mode="copy"``): a
copy starts at the first whole packet after the start (up to 26 ms late), and the first
packets of a cut MP3 decode silent without the ones before (its bit reservoir), so a
sound at the start was heard 60-84 ms late (``benchmarks/clip_starts.py``). A copy
into a .flac file is refused (a copied FLAC stream's header would give the whole
recording's length), as is a copy of anything but PCM into a .wav file (players read
WAV as PCM). The sound of a copied video starts with the first audio packet at or after
its keyframe, in step with the picture (within 1 ms in ``benchmarks/clip_starts.py``).

Times are on the file's own timeline, which starts at the container's start time (an
MP3's encoder delay, an MPEG-TS clock): the timeline of the transcript and search hits.

Every output is written through :func:`.output.written`: never onto a recording it is
read from, under a temporary name until complete, with errors naming the output.

Subtitles (:mod:`.export_subtitles`) go into the file as a soft track when the output
has video and its container holds one; burning them in needs the frames, so it always
re-encodes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO, Literal

import av
import numpy as np

from llama_index_video.errors import MediaError
from llama_index_video.media.export_subtitles import Burner, Cue, add_track, shift_cues, write_track
from llama_index_video.media.output import written
from llama_index_video.media.probe import container_start

logger = logging.getLogger(__name__)

DEFAULT_COPY_SLACK = 1.0
Mode = Literal["auto", "copy", "reencode"]
Subtitles = Literal["track", "burned"]
AAC_FORMATS = frozenset({"mp4", "mov", "ipod", "matroska", "adts"})
"""Output formats (PyAV's names) whose re-encoded audio is AAC."""
AUDIO_FORMATS = frozenset({"mp3", "ipod", "wav", "flac", "ogg", "opus", "adts"})
"""Output formats of audio files (:data:`AUDIO_FILE_SUFFIXES`): a join into one is sound
only (MP3 and FLAC would otherwise take video as a cover image)."""
AUDIO_FILE_SUFFIXES = frozenset({".mp3", ".m4a", ".wav", ".flac", ".ogg", ".opus", ".aac"})
"""The audio files a moment is cut into in its recording's own format; a recording in
another (.wma, .amr...) is cut into .m4a."""
# libvpx-vp9 at its defaults encodes a 10 s moment in minutes; realtime at the fastest
# setting takes about as long as H.264 does.
_ENCODER_OPTIONS = {"libvpx-vp9": {"deadline": "realtime", "cpu-used": "8", "row-mt": "1"}}
# Windows Media Audio encoders choose no bit rate of their own ("bitrate too low: got 0").
_AUDIO_BIT_RATES = {"wmav1": 64_000, "wmav2": 64_000}


class _CannotCopy(ValueError):
    """The output's container cannot hold a stream of the source as it is."""


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_span` wrote: how, and the span of the source the file holds."""

    path: Path
    method: Literal["copy", "reencode"]
    start: float  # on the source's timeline; earlier than asked when copied
    end: float
    subtitles: Subtitles | None = None  # None: no cues given, or no track in this format

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class JoinReport:
    """What :func:`join_spans` wrote: the joined length, and how its subtitles went in."""

    path: Path
    duration: float
    subtitles: Subtitles | None = None


def keyframe_before(source: Path, at: float) -> float | None:
    """The time of the last video keyframe at or before ``at``; None for audio only."""
    with av.open(str(source)) as container:
        if not container.streams.video:
            return None
        stream = container.streams.video[0]
        tb = stream.time_base or Fraction(1, 1000)
        origin = container_start(container)
        container.seek(
            max(0, int((at + origin) / tb)), stream=stream, backward=True, any_frame=False
        )
        best = 0.0
        for packet in container.demux(stream):  # ends: at the first packet past `at`
            if packet.pts is None:
                continue
            when = float(packet.pts * tb) - origin
            if when > at:
                break
            if packet.is_keyframe:
                best = when
        return best


def export_span(
    source: Path,
    start: float,
    end: float,
    output: Path,
    *,
    mode: Mode = "auto",
    copy_slack: float = DEFAULT_COPY_SLACK,
    cues: Sequence[Cue] = (),
    burn: bool = False,
) -> ExportReport:
    """Write ``[start, end)`` of ``source`` to ``output`` (its suffix picks the container).

    Args:
        cues: Subtitles on the source's timeline, written as a soft track (moved to the
            file's own start) where the container holds one.
        burn: Draw ``cues`` onto the frames instead; this re-encodes whatever ``mode``.

    Raises:
        MediaError: the source cannot be read, the output cannot be written, or
            subtitles are to be burned into an audio-only recording.
    """
    try:
        keyframe = keyframe_before(source, start)
        if burn and cues and keyframe is None:
            raise _nothing_to_burn_into(source)
        copy = not (burn and cues) and (
            mode == "copy"
            or (mode == "auto" and keyframe is not None and start - keyframe <= copy_slack)
        )
        if copy:
            begin = start if keyframe is None else keyframe
            try:
                with written(output, sources=[source]) as handle:
                    first, last, subtitles = _copy(source, begin, end, handle, output, cues)
                return ExportReport(output, "copy", first, last, subtitles)
            except _CannotCopy as exc:
                if mode == "copy":
                    raise MediaError(source, f"{exc}; re-encode it instead") from exc
        with written(output, sources=[source]) as handle, _open_output(handle, output) as out:
            shifted = shift_cues(cues, start, length=end - start)
            joiner = _Joiner(out, source, shifted, burn, video=_keeps_video(out, [source]))
            joiner.append(source, start, end).close()
        return ExportReport(output, "reencode", start, end, joiner.subtitles)
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise MediaError(source, f"cannot export {start:.1f}-{end:.1f} s: {exc}") from exc


def _copy(
    source: Path, begin: float, end: float, handle: BinaryIO, output: Path, cues: Sequence[Cue]
) -> tuple[float, float, Subtitles | None]:
    with av.open(str(source)) as inp, _open_output(handle, output) as out:
        streams = [s for s in inp.streams if s.type in ("video", "audio")]
        for stream in streams:
            if stream.codec_context.name not in out.supported_codecs:
                raise _CannotCopy(
                    f"{out.format.name} cannot hold its {stream.codec_context.name} {stream.type}"
                )
        if out.format.name == "flac":
            # The header of a copied stream (STREAMINFO) keeps the whole recording's length
            # and checksum; FLAC's encoder writes the moment's own, losslessly all the same.
            raise _CannotCopy("a copied FLAC stream keeps the recording's length in its header")
        if out.format.name == "wav" and any(
            not s.codec_context.name.startswith("pcm_") for s in streams
        ):
            # WAV can carry MP3 or FLAC, but players and Python's wave module read only PCM.
            raise _CannotCopy("a .wav file is read as PCM by players")
        targets = {s.index: out.add_stream_from_template(s) for s in streams}
        track = add_track(out) if cues and inp.streams.video else None
        if track is not None:
            write_track(out, track, shift_cues(cues, begin, length=end - begin))
        main = inp.streams.video[0] if inp.streams.video else streams[0]
        origin = container_start(inp)
        inp.seek(
            int((begin + origin) / _time_base(main)), stream=main, backward=True, any_frame=False
        )
        first: float | None = None
        last = begin
        past: set[int] = set()  # the streams that reached `end`: interleaved, they differ
        for packet in inp.demux(streams):  # ends: when the file does, or all are past `end`
            if packet.pts is None or packet.dts is None:
                continue
            tb = packet.time_base
            when = float(packet.pts * tb) - origin
            if when < begin - 1e-3:
                continue
            if when >= end:
                past.add(packet.stream.index)
                if len(past) == len(streams):
                    break
                continue
            first = when if first is None else min(first, when)
            offset = int((begin + origin) / tb)
            packet.pts -= offset
            packet.dts -= offset
            last = max(last, when + float((packet.duration or 0) * tb))
            packet.stream = targets[packet.stream.index]
            out.mux(packet)
        subtitles: Subtitles | None = "track" if track is not None else None
        return (first if first is not None else begin), min(last, end), subtitles


def join_spans(
    spans: list[tuple[Path, float, float]],
    output: Path,
    *,
    cues: Sequence[Cue] = (),
    burn: bool = False,
) -> JoinReport:
    """Re-encode the spans one after another into ``output``, in the order given. Video
    takes the first span's size and rate (others are scaled), audio its sample rate and
    layout. The output is sound only when ``output`` is an audio file (``.mp3``,
    ``.m4a``...) or a span's recording has no video (moments of a video and of an
    audio recording join as sound).

    Args:
        cues: Subtitles on the joined file's timeline: a soft track where the container
            holds one, or drawn onto the frames with ``burn``.

    Raises:
        MediaError: a span cannot be read, or subtitles are to be burned into audio.
    """
    if not spans:
        raise ValueError("nothing to join")
    try:
        sources = [source for source, _, _ in spans]
        with written(output, sources=sources) as handle, _open_output(handle, output) as out:
            joiner = _Joiner(out, spans[0][0], cues, burn, video=_keeps_video(out, sources))
            for source, start, end in spans:
                joiner.append(source, start, end)
            joiner.close()
            return JoinReport(output, joiner.seconds, joiner.subtitles)
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise MediaError(output, f"cannot join the moments: {exc}") from exc


def _keeps_video(out: Any, sources: Sequence[Path]) -> bool:
    """Whether a re-encoded export has video: not into an audio file, and only when every
    recording it joins has video (else the moments join as sound)."""
    if out.format.name in AUDIO_FORMATS:
        return False
    for source in sources:
        with av.open(str(source)) as probe:
            if not probe.streams.video:
                return False
    return True


class _Joiner:
    """Encoders of one output (H.264 + AAC) that moments are appended to, in order, with
    ``cues`` (on the output's timeline) as a soft track or, with ``burn``, on the frames;
    without ``video``, sound only."""

    def __init__(
        self, out: Any, first: Path, cues: Sequence[Cue], burn: bool, *, video: bool
    ) -> None:
        self.out = out
        with av.open(str(first)) as probe:
            video_in = probe.streams.video[0] if probe.streams.video and video else None
            audio_in = probe.streams.audio[0] if probe.streams.audio else None
            if video_in is None and audio_in is None:
                raise MediaError(first, "no video or audio stream to export")
            self.video: Any = None
            self.audio: Any = None
            self.rate = Fraction(1)
            if video_in is not None:
                self.rate = Fraction(video_in.average_rate or 25)
                codec = "libx264" if "h264" in out.supported_codecs else out.default_video_codec
                self.video = out.add_stream(codec, rate=self.rate)
                self.video.options = _ENCODER_OPTIONS.get(self.video.codec_context.name, {})
                self.video.width, self.video.height = video_in.width, video_in.height
                self.video.pix_fmt = "yuv420p"
            if audio_in is not None:
                # AAC where players expect it; MP3, WAV, FLAC... get their own codec
                aac = out.format.name in AAC_FORMATS
                codec = "aac" if aac else out.default_audio_codec
                rates = av.Codec(codec, "w").audio_rates  # Opus: 48 kHz and a few below
                rate = audio_in.rate if not rates or audio_in.rate in rates else max(rates)
                self.audio = out.add_stream(codec, rate=rate)
                if codec in _AUDIO_BIT_RATES:
                    self.audio.bit_rate = _AUDIO_BIT_RATES[codec]
                # a WAV without a channel mask says "1 channels", which encoders refuse;
                # more than two channels are mixed down to stereo
                layout = "mono" if audio_in.channels == 1 else "stereo"
                self.audio.layout = layout
                # one resampler per recording: a resampler takes one input format only
                self.resampling = {"format": self.audio.format.name, "layout": layout, "rate": rate}
        self.burner: Burner | None = None
        self.subtitles: Subtitles | None = None
        if cues and burn:
            if self.video is None:
                raise _nothing_to_burn_into(first)
            self.burner = Burner(cues, self.video.width, self.video.height)
            self.subtitles = "burned"
        elif cues and self.video is not None:
            track = add_track(out)
            if track is not None:
                write_track(out, track, cues)
                self.subtitles = "track"
        self.seconds = 0.0  # written so far: where the next moment starts
        self.last_pts = -1
        self.samples = 0

    def append(self, source: Path, start: float, end: float) -> _Joiner:
        with av.open(str(source)) as inp:
            video_in = inp.streams.video[0] if inp.streams.video and self.video else None
            audio_in = inp.streams.audio[0] if inp.streams.audio else None
            main = video_in or audio_in
            if main is None:
                raise MediaError(source, "has no sound to join into an audio-only export")
            wanted = [s for s in (video_in, audio_in) if s is not None]
            resampler = av.AudioResampler(**self.resampling) if self.audio is not None else None
            origin = container_start(inp)  # where the file's timeline starts (0 s)
            inp.seek(
                max(0, int((start - 1 + origin) / _time_base(main))), stream=main, backward=True
            )
            shown: av.VideoFrame | None = None  # the picture on screen at `start`
            for frame in inp.decode(*wanted):  # ends: when the file does, or past `end`
                if not isinstance(frame, av.VideoFrame | av.AudioFrame) or frame.time is None:
                    continue
                at = frame.time - origin  # on the file's timeline
                if isinstance(frame, av.VideoFrame):
                    if at < start - 1e-3:
                        shown = frame
                        continue
                    if at >= end:
                        break
                    if shown is not None and self._slot(self.seconds + at - start) > self._slot(
                        self.seconds
                    ):  # the picture at the start shows until this frame replaces it
                        self._video(shown, self.seconds)
                    shown = None
                    self._video(frame, self.seconds + at - start)
                elif isinstance(frame, av.AudioFrame) and resampler is not None:
                    if at >= end:
                        if video_in is None:
                            break
                        continue
                    head = _from(frame, at, start)
                    if head is not None:
                        self._audio(resampler.resample(head))
            if resampler is not None:
                self._audio(resampler.resample(None))  # what it still holds of this moment
        self.seconds += end - start
        return self

    def _slot(self, at: float) -> int:
        """The output frame a picture at ``at`` s falls in."""
        return round(at * self.rate)

    def _video(self, frame: av.VideoFrame, at: float) -> None:
        if (frame.width, frame.height) != (self.video.width, self.video.height):
            frame = frame.reformat(width=self.video.width, height=self.video.height)
        if self.burner is not None:
            frame = self.burner(frame, at)
        # strictly increasing, as the muxer wants, even where the source repeats a time
        self.last_pts = frame.pts = max(self.last_pts + 1, self._slot(at))
        frame.time_base = 1 / self.rate
        self.out.mux(self.video.encode(frame))

    def _audio(self, parts: list[av.AudioFrame]) -> None:
        for part in parts:
            part.pts = self.samples
            part.time_base = Fraction(1, part.sample_rate)
            self.samples += part.samples
            self.out.mux(self.audio.encode(part))

    def close(self) -> None:
        for encoder in (self.video, self.audio):
            if encoder is not None:
                self.out.mux(encoder.encode())


def _from(frame: av.AudioFrame, at: float, start: float) -> av.AudioFrame | None:
    """``frame`` (at ``at`` s on the file's timeline) from ``start`` on, to the sample:
    None when it ends before ``start``, its later part when it holds ``start`` (whole
    packets started the moment up to one packet, 20-26 ms, late), else ``frame`` itself,
    made to follow what was resampled before."""
    skip = round((start - at) * frame.sample_rate)
    if skip >= frame.samples:
        return None
    if skip > 0:
        samples = frame.to_ndarray()
        step = 1 if frame.format.is_planar else len(frame.layout.channels)
        head = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples[:, skip * step :]),  # type: ignore[arg-type]
            format=frame.format.name,
            layout=frame.layout.name,
        )
        head.sample_rate = frame.sample_rate
        frame = head
    frame.pts = None
    return frame


def _open_output(handle: BinaryIO, output: Path) -> Any:
    """PyAV's container writing into ``handle``, its format chosen by ``output``'s suffix.

    Raises:
        MediaError: naming ``output``: no format has its suffix.
    """
    try:
        return av.open(handle, "w")
    except ValueError as exc:  # PyAV: "Could not determine output format"
        which = f"by the suffix '{output.suffix}'" if output.suffix else "without a suffix"
        raise MediaError(
            output, f"no format is known {which}; name it e.g. .mp4, .mkv, .mp3"
        ) from exc


def _nothing_to_burn_into(source: Path) -> MediaError:
    return MediaError(source, "has no video to burn subtitles into; drop the burn")


def _time_base(stream: Any) -> Fraction:
    return Fraction(stream.time_base or Fraction(1, 1000))
