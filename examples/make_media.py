"""Generate the bundled example media and the ground truth the tests and benchmarks check.

Run from anywhere::

    python examples/make_media.py [--out examples/media] [--fixtures tests/fixtures/subtitles]

It writes two slide videos, a meeting recording, a markdown handbook, ``timeline.json``
(what is said and shown, and when) and three subtitle fixtures. The slides are drawn
by ``examples/slides.py``.

Why it is built this way:

* Each narration sentence is synthesised on its own with ``espeak-ng``, its leading and
  trailing silence is trimmed, and its samples are placed at the sentence's start in a
  silent track. The start time is therefore exact and the end is *measured* (start plus
  the trimmed length), not guessed. A sentence that would run into the next one is an
  error, never silently shifted.
* Audio stays at espeak's own sample rate, so no resampling blurs the timings. After
  encoding, every file is decoded again and each sentence's onset is checked, which
  catches encoder delay (AAC priming, MP3 padding) that a container failed to undo.
  Times count from the first decoded sample. FFmpeg reports the MP3's stream start as
  0.050 s (the LAME delay it skips), so code placing samples by ``frame.pts`` must subtract
  ``stream.start_time``; code that counts decoded samples needs nothing.
* Video is constant frame rate. A frame shows the slide that is on screen at its
  timestamp, so a slide boundary that falls between frames (22.5 s at 15 fps) is recorded
  at the first frame that shows the next slide: ``timeline.json`` holds what the file
  really shows.
* The chart's y-axis label reads bottom to top, as plotting libraries draw it. RapidOCR
  reads it only with its angle classifier on (the default), as "ALTITUDE（Km)".
* Output is byte-stable on one machine: no randomness, ``bitexact`` muxers (no library
  version or creation time in the metadata) and single-threaded x264. Another FreeType,
  espeak-ng or FFmpeg build may change the bytes, but not the timeline beyond a sample.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import subprocess
import sys
import tempfile
import wave
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

logger = logging.getLogger("make_media")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.slides import HEIGHT, WIDTH, Fonts, Slide, render  # noqa: E402

FPS = 15
VOICE, WORDS_PER_MINUTE = "en-us", 160
SILENCE_THRESHOLD = 100  # int16 amplitude (about -50 dBFS) below which espeak output is silence
ONSET_TOLERANCE = 0.03  # seconds an encoded sentence onset may differ from the timeline


# --------------------------------------------------------------------------- content


@dataclass(frozen=True)
class Sentence:
    """A narration sentence as scripted: when it starts and what is said."""

    start: float
    text: str


@dataclass(frozen=True)
class Recording:
    """One media file to generate: its length, narration and (for videos) slides."""

    name: str
    duration: float
    sentences: tuple[Sentence, ...]
    slides: tuple[Slide, ...] = ()


OZONE = Recording(
    name="ozone_explainer.mp4",
    duration=80.0,
    sentences=(
        Sentence(1.0, "Welcome to this short explainer about the ozone layer."),
        Sentence(5.0, "Ozone is a molecule made of three oxygen atoms."),
        Sentence(
            12.5,
            "Most of the ozone in our atmosphere sits in the stratosphere, "
            "between fifteen and thirty five kilometres above the ground.",
        ),
        Sentence(23.5, "The ozone layer absorbs about ninety percent of ultraviolet B radiation."),
        Sentence(29.5, "It absorbs one hundred percent of ultraviolet C radiation."),
        # One answer split across two segments with a pause between them.
        Sentence(36.0, "In the stratosphere the temperature rises with altitude because"),
        Sentence(42.0, "ultraviolet radiation is absorbed by the ozone layer."),
        Sentence(
            49.0,
            "In nineteen eighty five, scientists at Halley Bay discovered "
            "a hole in the ozone layer over Antarctica.",
        ),
        Sentence(
            56.5,
            "The hole was caused by chlorofluorocarbons, "
            "chemicals once used in refrigerators and spray cans.",
        ),
        Sentence(65.0, "The Montreal Protocol of nineteen eighty seven banned these chemicals."),
        Sentence(71.0, "Scientists expect the ozone layer to recover by about twenty sixty six."),
    ),
    slides=(
        Slide(0.0, 12.0, "title", "The Ozone Layer", ("A short explainer",)),
        Slide(
            12.0,
            21.0,
            "line_chart",
            "Temperature in the atmosphere",
            ("ALTITUDE (km)", "TEMPERATURE (°C)"),
            spoken=False,
        ),
        Slide(21.0, 22.5, "flash", "1 DOBSON UNIT = 0.01 mm", spoken=False),
        Slide(
            22.5,
            36.0,
            "table",
            "UV absorption",
            ("UV-A  absorbed: little", "UV-B  absorbed: 90%", "UV-C  absorbed: 100%"),
        ),
        Slide(36.0, 48.0, "sun_diagram", "Stratospheric warming", ("Stratosphere: 15-35 km",)),
        Slide(48.0, 64.0, "text", "The ozone hole", ("Discovered 1985, Halley Bay, Antarctica",)),
        Slide(
            64.0,
            80.0,
            "text",
            "Montreal Protocol (1987)",
            ("Signed by 197 countries",),
            spoken=False,
        ),
    ),
)

CHECKOUT = Recording(
    name="checkout_deep_dive.mp4",
    duration=60.0,
    sentences=(
        Sentence(1.0, "Today we walk through the architecture of the checkout service."),
        Sentence(10.5, "Every order is written to a Postgres database with three tables."),
        Sentence(17.0, "We shard the payments table by customer region."),
        Sentence(24.0, "Reads go through a Redis cache with a time to live of five minutes."),
        Sentence(31.0, "As you can see here, the tail latency is the real problem."),
        Sentence(37.0, "The median request finishes in forty milliseconds."),
        Sentence(46.0, "Next quarter we will move the cache to a dedicated cluster."),
        Sentence(52.0, "We also plan to retry failed payments at most three times."),
    ),
    slides=(
        Slide(0.0, 10.0, "title", "Checkout Service Deep Dive"),
        Slide(
            10.0,
            30.0,
            "schema",
            "Database schema",
            ("orders", "payments", "customers"),
            spoken=False,
        ),
        Slide(30.0, 45.0, "bar_chart", "Latency", ("p99 latency: 340 ms",), spoken=False),
        Slide(
            45.0,
            60.0,
            "bullets",
            "Next steps",
            ("Dedicated cache cluster", "Retry payments (max 3)"),
        ),
    ),
)

TEAM_SYNC = Recording(
    name="team_sync.mp3",
    duration=40.0,
    sentences=(
        Sentence(1.0, "Good morning everyone, this is the weekly team sync."),
        Sentence(
            6.0, "The release of version two point four is planned for the fourteenth of March."
        ),
        Sentence(14.0, "Maria will own the migration to the new billing provider."),
        Sentence(22.0, "The on call rotation changes on Monday."),
        Sentence(30.0, "Please review the security checklist before Friday."),
    ),
)

HANDBOOK = """\
# Team handbook

A short guide to how the platform team ships and runs its services.

## Deploys

Production deploys happen on Tuesdays and Thursdays. Merge to the main branch by noon the day
before, so the release owner can build, tag and smoke-test the release candidate. Outside
those two days we only ship fixes for an open incident, and only with a second reviewer.

## Staging

The staging environment resets nightly at 02:00 UTC. Every database is restored from the
seed snapshot and every feature flag returns to its default, so anything you need to keep
belongs in a fixture in the repository, not in staging.

## Incidents

Report incidents in the #incidents channel. Say what you see, when it started and who is
affected; the on-call engineer acknowledges within fifteen minutes and posts updates in the
same thread until the incident is closed.
"""

SUBTITLE_CLIP_SECONDS = 15.0
AUTO_CAPTION_SECONDS = 20.0


# --------------------------------------------------------------------------- narration


@dataclass(frozen=True)
class Spoken:
    """A sentence as it ended up in the file: exact start, measured end."""

    start: float
    end: float
    text: str


def synthesize(text: str, workdir: Path) -> tuple[np.ndarray, int]:
    """Speak ``text`` with espeak-ng and return its trimmed int16 samples and sample rate."""
    wav_path = workdir / "sentence.wav"
    command = ["espeak-ng", "-v", VOICE, "-s", str(WORDS_PER_MINUTE), "-w", str(wav_path), text]
    subprocess.run(command, check=True, capture_output=True)
    with wave.open(str(wav_path), "rb") as wav:
        if wav.getnchannels() != 1 or wav.getsampwidth() != 2:
            raise RuntimeError(f"espeak-ng wrote {wav_path} in an unexpected format")
        rate = wav.getframerate()
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SILENCE_THRESHOLD)
    if loud.size == 0:
        raise RuntimeError(f"espeak-ng produced silence for {text!r}")
    return samples[loud[0] : loud[-1] + 1], rate


def narrate(recording: Recording, workdir: Path) -> tuple[np.ndarray, int, list[Spoken]]:
    """Build the narration track and measure where each sentence ends.

    Raises:
        ValueError: if a sentence would overlap the next one or run past the end.
    """
    speeches = [synthesize(sentence.text, workdir) for sentence in recording.sentences]
    rates = {rate for _, rate in speeches}
    if len(rates) != 1:
        raise RuntimeError(f"espeak-ng changed sample rate between sentences: {sorted(rates)}")
    rate = rates.pop()
    track = np.zeros(round(recording.duration * rate), dtype=np.int16)
    spoken: list[Spoken] = []
    limits = [s.start for s in recording.sentences[1:]] + [recording.duration]
    for sentence, (speech, _), limit in zip(recording.sentences, speeches, limits, strict=True):
        end = sentence.start + len(speech) / rate
        if end > limit:
            raise ValueError(
                f"{recording.name}: {sentence.text!r} ends at {end:.2f} s, after {limit} s; "
                f"lower WORDS_PER_MINUTE (now {WORDS_PER_MINUTE}) or move the next sentence"
            )
        first = round(sentence.start * rate)
        track[first : first + len(speech)] = speech
        spoken.append(Spoken(sentence.start, round(end, 3), sentence.text))
    return track, rate, spoken


# --------------------------------------------------------------------------- frames


def first_frame(seconds: float) -> int:
    """Index of the first frame whose timestamp is at or after ``seconds``."""
    return math.ceil(round(seconds * FPS, 6))


def slide_frames(recording: Recording, fonts: Fonts) -> Iterator[np.ndarray]:
    """One RGB image per video frame: frame ``i`` shows the slide on screen at ``i / FPS``."""
    for slide in recording.slides:
        image = render(slide, fonts)
        for _ in range(first_frame(slide.start), first_frame(slide.end)):
            yield image


# --------------------------------------------------------------------------- encoding

BITEXACT = {"fflags": "+bitexact"}


def audio_frames(track: np.ndarray, rate: int, start: int, stop: int) -> Iterator[av.AudioFrame]:
    """``track[start:stop]`` as encoder input, in frames stamped with their first sample."""
    for first in range(start, stop, 1024):
        chunk = track[first : min(first + 1024, stop)]
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = rate, first
        yield frame


def encode_video(
    path: Path, recording: Recording, track: np.ndarray, rate: int, fonts: Fonts
) -> None:
    """H.264 (yuv420p) 640x360 at 15 fps with AAC mono narration, in MP4."""
    with av.open(str(path), "w", format="mp4", container_options=BITEXACT) as container:
        video = container.add_stream("libx264", rate=FPS)
        video.width, video.height, video.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        video.codec_context.flags |= av.codec.context.Flags.bitexact
        video.codec_context.options = {
            "crf": "26",
            "preset": "slow",
            "threads": "1",
            "g": str(5 * FPS),
        }
        audio = container.add_stream("aac", rate=rate, layout="mono")
        audio.bit_rate = 40_000
        audio.codec_context.flags |= av.codec.context.Flags.bitexact
        audio_done = 0  # samples encoded so far: audio keeps pace with the frames
        for index, rgb in enumerate(slide_frames(recording, fonts)):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
            frame.pts = index
            container.mux(video.encode(frame))
            audio_end = min((index + 1) * rate // FPS, len(track))
            for chunk in audio_frames(track, rate, audio_done, audio_end):
                container.mux(audio.encode(chunk))
            audio_done = audio_end
        for chunk in audio_frames(track, rate, audio_done, len(track)):
            container.mux(audio.encode(chunk))
        container.mux(video.encode(None))
        container.mux(audio.encode(None))


def encode_mp3(path: Path, track: np.ndarray, rate: int) -> None:
    with av.open(str(path), "w", format="mp3", container_options=BITEXACT) as container:
        audio = container.add_stream("libmp3lame", rate=rate, layout="mono")
        audio.bit_rate = 32_000
        audio.codec_context.flags |= av.codec.context.Flags.bitexact
        for chunk in audio_frames(track, rate, 0, len(track)):
            container.mux(audio.encode(chunk))
        container.mux(audio.encode(None))


def decoded_audio(path: Path) -> tuple[np.ndarray, int]:
    """Decode the first audio stream of ``path`` to float mono samples."""
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        chunks = [frame.to_ndarray().reshape(-1) for frame in container.decode(stream)]
        return np.concatenate(chunks).astype(np.float32), stream.sample_rate


def check_onsets(path: Path, spoken: Sequence[Spoken]) -> None:
    """Decode ``path`` and check each sentence starts where the timeline says.

    The onset is the first sample above the silence threshold after the previous sentence
    ended, so encoder delay or padding left in the file shows up here.
    """
    samples, rate = decoded_audio(path)
    threshold = 4 * SILENCE_THRESHOLD / 32768
    floor = 0.0
    for sentence in spoken:
        begin = round(max(floor, sentence.start - 0.5) * rate)
        loud = np.flatnonzero(np.abs(samples[begin:]) > threshold)
        onset = (begin + loud[0]) / rate if loud.size else math.inf
        if abs(onset - sentence.start) > ONSET_TOLERANCE:
            raise RuntimeError(
                f"{path.name}: {sentence.text!r} starts at {onset:.3f} s, not {sentence.start}"
            )
        floor = sentence.end + 0.05
    logger.info(
        "%s: all %d sentence onsets within %.0f ms", path.name, len(spoken), ONSET_TOLERANCE * 1000
    )


# --------------------------------------------------------------------------- subtitles


def clock(seconds: float, separator: str) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    return f"{hours:02d}:{minutes:02d}:{millis // 1000:02d}{separator}{millis % 1000:03d}"


def srt_text(spoken: Sequence[Spoken]) -> str:
    cues = [
        f"{number}\n{clock(s.start, ',')} --> {clock(s.end, ',')}\n{s.text}\n"
        for number, s in enumerate(spoken, start=1)
    ]
    return "\n".join(cues)


def caption_lines(
    spoken: Sequence[Spoken], *, words_per_line: int = 5
) -> list[list[tuple[float, str]]]:
    """Split sentences into caption lines of timed words, as an auto-captioner would.

    Word times are spread over the sentence by character count: close, not exact.
    Auto captions are lower case without punctuation; a line never spans two sentences.
    """
    lines = []
    for sentence in spoken:
        words = re.sub(r"[^\w\s']", "", sentence.text).lower().split()
        weights = np.cumsum([0] + [len(word) + 1 for word in words])
        starts = sentence.start + (sentence.end - sentence.start) * weights[:-1] / weights[-1]
        timed = list(zip(starts.round(3).tolist(), words, strict=True))
        lines += [timed[i : i + words_per_line] for i in range(0, len(timed), words_per_line)]
    return lines


def rolling_vtt_text(spoken: Sequence[Spoken]) -> str:
    """YouTube-style auto captions: each cue repeats the previous line above the new one,
    and a 10 ms cue holding the finished line sits between them."""
    settings = "align:start position:0%"
    lines = caption_lines(spoken)
    blocks = ["WEBVTT\nKind: captions\nLanguage: en\n"]
    previous = " "
    begin = lines[0][0][0]
    for index, line in enumerate(lines):
        end = lines[index + 1][0][0] if index + 1 < len(lines) else spoken[-1].end + 1.0
        first_word = line[0][1]
        karaoke = first_word + "".join(f"<{clock(t, '.')}><c> {word}</c>" for t, word in line[1:])
        blocks.append(
            f"{clock(begin, '.')} --> {clock(end, '.')} {settings}\n{previous}\n{karaoke}\n"
        )
        previous = " ".join(word for _, word in line)
        blocks.append(f"{clock(end, '.')} --> {clock(end + 0.01, '.')} {settings}\n{previous}\n \n")
        begin = end + 0.01
    return "\n".join(blocks)


def mux_subtitled_clip(source: Path, spoken: Sequence[Spoken], path: Path) -> None:
    """Copy the first seconds of ``source`` into MKV and add the narration as a SubRip stream."""
    with (
        av.open(str(source)) as reader,
        av.open(str(path), "w", format="matroska", container_options=BITEXACT) as writer,
    ):
        copies = {
            s.index: writer.add_stream_from_template(s)
            for s in (reader.streams.video[0], reader.streams.audio[0])
        }
        subtitles = writer.add_mux_stream("subrip")
        subtitles.time_base = Fraction(1, 1000)
        subtitles.metadata["language"] = "eng"
        for packet in reader.demux(*reader.streams.video, *reader.streams.audio):
            # The AAC priming packet has a negative timestamp, which Matroska cannot hold: it
            # would shift every stream 46 ms later. Dropping it only loses leading silence.
            if packet.pts is None or not 0 <= packet.pts * packet.time_base < SUBTITLE_CLIP_SECONDS:
                continue
            packet.stream = copies[packet.stream.index]
            writer.mux(packet)
        for sentence in spoken:
            if sentence.start >= SUBTITLE_CLIP_SECONDS:
                break
            end = min(sentence.end, SUBTITLE_CLIP_SECONDS)
            packet = av.Packet(sentence.text.encode())
            packet.stream = subtitles
            packet.time_base = subtitles.time_base
            packet.pts = packet.dts = round(sentence.start / subtitles.time_base)
            packet.duration = round((end - sentence.start) / subtitles.time_base)
            writer.mux(packet)


# --------------------------------------------------------------------------- main


def timeline_entry(recording: Recording, spoken: Sequence[Spoken], rate: int) -> dict[str, object]:
    is_video = bool(recording.slides)
    entry: dict[str, object] = {
        "kind": "video" if is_video else "audio",
        "duration": recording.duration,
    }
    if is_video:
        entry.update(width=WIDTH, height=HEIGHT, fps=FPS)
    entry["sample_rate"] = rate
    entry["narration"] = [{"start": s.start, "end": s.end, "text": s.text} for s in spoken]
    entry["slides"] = [
        {
            "start": round(first_frame(slide.start) / FPS, 3),
            "end": round(first_frame(slide.end) / FPS, 3),
            "title": slide.title,
            "visible_text": slide.visible_text,
            "spoken": slide.spoken,
        }
        for slide in recording.slides
    ]
    return entry


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "examples" / "media", help="media folder"
    )
    parser.add_argument(
        "--fixtures",
        type=Path,
        default=ROOT / "tests" / "fixtures" / "subtitles",
        help="subtitle fixtures folder",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    args.fixtures.mkdir(parents=True, exist_ok=True)
    fonts = Fonts()
    timeline: dict[str, object] = {}
    narrations: dict[str, list[Spoken]] = {}
    with tempfile.TemporaryDirectory(prefix="make_media-") as scratch:
        for recording in (OZONE, CHECKOUT, TEAM_SYNC):
            track, rate, spoken = narrate(recording, Path(scratch))
            path = args.out / recording.name
            if recording.slides:
                encode_video(path, recording, track, rate, fonts)
            else:
                encode_mp3(path, track, rate)
            check_onsets(path, spoken)
            narrations[recording.name] = spoken
            timeline[recording.name] = timeline_entry(recording, spoken, rate)
            logger.info("wrote %s (%d bytes)", path, path.stat().st_size)

    (args.out / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    timeline["handbook.md"] = {"kind": "document", "duration": None, "narration": [], "slides": []}
    document = {
        "about": "Ground truth for the example media, written by examples/make_media.py. Times are "
        "seconds. A sentence's start is exact; its end is measured (speech trimmed of silence). "
        "A slide is on screen from start (inclusive) to end (exclusive), on the frame grid. "
        "Audio times count from the first decoded sample.",
        "files": timeline,
    }
    (args.out / "timeline.json").write_text(
        json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )

    ozone = narrations[OZONE.name]
    (args.fixtures / "ozone_explainer.srt").write_text(srt_text(ozone), encoding="utf-8")
    early = [s for s in ozone if s.start < AUTO_CAPTION_SECONDS]
    (args.fixtures / "auto_generated.vtt").write_text(rolling_vtt_text(early), encoding="utf-8")
    mux_subtitled_clip(args.out / OZONE.name, ozone, args.fixtures / "with_subtitle_stream.mkv")
    logger.info("wrote timeline.json, handbook.md and subtitle fixtures in %s", args.fixtures)


if __name__ == "__main__":
    main()
