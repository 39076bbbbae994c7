"""Which language ``ingest --live`` hears each chunk of a real recording in: each chunk
on its own (as before) against what the recording was heard in so far carried forward
(:mod:`llama_index_video.transcription.recording_language`), in the same run.

    python benchmarks/live_languages.py [--chunk-seconds 30 10]

Each recording is cut as the live follower cuts a file written at real time: spans of
``--chunk-seconds`` decoded one after another from the file with
:func:`~llama_index_video.media.audio.decode_audio_span`, the function the follower
calls. The language of every chunk is found as the transcriber finds it
(VAD utterances, :func:`~llama_index_video.transcription.language.detect_stretches` with
``base``'s head and writing down), twice per chunk, interleaved: on its own, and with the
recording's :class:`~llama_index_video.transcription.recording_language.RecordingLanguage`.

Material, all real speech: the English meeting excerpts of ``tests/fixtures/real_speech``
(AMI, a phone call; 30-60 s each) and the ten LibriSpeech readers of
``tests/fixtures/real_readers``, which must be heard in English; the readings of
``tests/fixtures/real_languages`` (FLEURS, Common Voice, MLS, AISHELL-1, Arabic Speech
Corpus), which must be heard in their own language; made in a temporary folder (WAV):
*meeting*, the English excerpts joined (7.5 min, a long recording like a user's), and
for each other language the first 45 s of ``ami_es2004a`` then that language's readings
over and over for 60 s or more (*en>xx*, a switch in the middle of a chunk that goes on
in the new language), and the readings once then ``ami_es2004a`` (*xx>en*).

With ``--openai-whisper``, each chunk's language is found as
:class:`~llama_index_video.transcription.openai_whisper.OpenAIWhisperTranscriber` finds
it (``base``'s weights converted for it: the head over the chunk's first 30 s, one
language per chunk), alone and with the recording's language.

With ``--held-out``, material the rule was not fitted on: the first 5 min of
``benchmarks/long_real``'s amateur reader (non-native) and the first 3 min of LJ
Speech's reader, which must be heard in English; the ten FLEURS readings of each
language of ``tests/fixtures/fleurs_languages`` (German, Spanish, French, Portuguese)
joined; and the joins as above with the amateur reader's first 45 s before them and LJ
Speech's reader's first 60 s after them.

Per recording and chunk length: the chunks, those holding a stretch in a language not
spoken in their span (*wrong*, alone -> carried), and for a join, the seconds from the
join to the first stretch in the new language (*switch*) and the chunks after it
heard in another language; the CPU seconds of the language check (VAD and probes) of
both ways. The load average is printed at the start and end.

And a run stopped and started again (``ingest --live`` resumed): a restart before each
chunk but the first, one at a time, the chunks after it heard with the recording's
settled language lost (as a resumed run did before it was stored) or kept (now, the
same as with no restart); *restarts* counts the chunks heard differently after a
restart, until the restarted run is back in the recording's settled language, and the
wrong ones among them, lost -> kept (:func:`after_restart`): one restart half-way
through (before the middle chunk), and a restart before each chunk, one at a time.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.multilingual import write_wav  # noqa: E402
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio, decode_audio_span  # noqa: E402
from llama_index_video.transcription.language import (  # noqa: E402
    LanguageStretch,
    detect_stretches,
    whisper_confirmer,
    whisper_identifier,
)
from llama_index_video.transcription.models import resolve_model  # noqa: E402
from llama_index_video.transcription.recording_language import (  # noqa: E402
    RecordingLanguage,
    heard_in,
)
from llama_index_video.transcription.vad import UTTERANCES, VoiceActivity  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
ENGLISH = [
    *sorted((FIXTURES / "real_speech").glob("*.flac")),
    FIXTURES / "real_readers" / "ten_readers.opus",
]
LEAD = FIXTURES / "real_speech" / "ami_es2004a.flac"
LEAD_SECONDS = 45.0
AFTER_JOIN_SECONDS = 60.0
"""A recording that changes to another language goes on in it this long, at least."""
HELD_OUT_ENGLISH = {
    ROOT / "benchmarks" / "long_real" / "amateur_reader.opus": 300.0,
    ROOT / "benchmarks" / "long_real" / "lj_reader.opus": 180.0,
}
"""Held-out English readings -> the seconds of each heard (from the start)."""
HELD_OUT_OTHERS = FIXTURES / "fleurs_languages"


@dataclass(frozen=True)
class Recording:
    """A file and the language spoken from each time on (``(start, code)``, in order)."""

    path: Path
    spoken: tuple[tuple[float, str], ...]

    def languages(self, start: float, end: float) -> set[str]:
        """The languages spoken in ``start``-``end``."""
        return {
            code for i, (at, code) in enumerate(self.spoken) if at < end and self._until(i) > start
        }

    def _until(self, i: int) -> float:
        return self.spoken[i + 1][0] if i + 1 < len(self.spoken) else float("inf")


@dataclass
class Heard:
    """How one way of hearing a recording went."""

    chunks: int = 0
    wrong: int = 0
    switch: float | None = None
    wrong_after: int = 0
    cpu_s: float = 0.0


def other_languages() -> dict[str, list[Path]]:
    """Each language of ``real_languages`` -> its readings."""
    found: dict[str, list[Path]] = {}
    for manifest in sorted((FIXTURES / "real_languages").glob("*.json")):
        audio = manifest.with_name(json.loads(manifest.read_text(encoding="utf-8"))["audio"])
        found.setdefault(audio.name.split("_")[0], []).append(audio)
    return found


def recordings(folder: Path) -> list[Recording]:
    """The files and joins described in the module docstring."""
    found = [Recording(path, ((0.0, "en"),)) for path in ENGLISH]
    others = other_languages()
    found += [Recording(path, ((0.0, code),)) for code, paths in others.items() for path in paths]
    meeting = np.concatenate([decode_audio(path) for path in ENGLISH[:-1]])
    found.append(Recording(written(folder / "meeting.wav", meeting), ((0.0, "en"),)))
    lead = decode_audio(LEAD)
    readings = {
        code: np.concatenate([decode_audio(path) for path in paths])
        for code, paths in others.items()
    }
    return found + joins(folder, lead[: round(LEAD_SECONDS * SAMPLE_RATE)], readings, lead)


def held_out_recordings(folder: Path) -> list[Recording]:
    """The held-out files and joins described in the module docstring (``--held-out``)."""
    english = {
        path: decode_audio(path)[: round(seconds * SAMPLE_RATE)]
        for path, seconds in HELD_OUT_ENGLISH.items()
    }
    found = [
        Recording(written(folder / f"{path.stem}.wav", samples), ((0.0, "en"),))
        for path, samples in english.items()
    ]
    readings: dict[str, np.ndarray] = {}
    for clip in json.loads((HELD_OUT_OTHERS / "clips.json").read_text(encoding="utf-8"))["clips"]:
        audio = decode_audio(HELD_OUT_OTHERS / clip["audio"])
        before = readings.get(clip["language"], np.empty(0, np.float32))
        readings[clip["language"]] = np.concatenate([before, audio])
    found += [
        Recording(written(folder / f"{code}.wav", samples), ((0.0, code),))
        for code, samples in readings.items()
    ]
    lead, tail = english.values()
    cut = lead[: round(LEAD_SECONDS * SAMPLE_RATE)]
    return found + joins(folder, cut, readings, tail[: round(AFTER_JOIN_SECONDS * SAMPLE_RATE)])


def joins(
    folder: Path, lead: np.ndarray, readings: dict[str, np.ndarray], tail: np.ndarray
) -> list[Recording]:
    """For each language's ``readings``: English ``lead`` then the readings over and over
    for :data:`AFTER_JOIN_SECONDS` or more (*en>xx*), and the readings then English
    ``tail`` (*xx>en*)."""
    found = []
    join = len(lead) / SAMPLE_RATE
    for code, spoken in readings.items():
        repeated = np.tile(spoken, math.ceil(AFTER_JOIN_SECONDS * SAMPLE_RATE / len(spoken)))
        found.append(
            Recording(
                written(folder / f"en>{code}.wav", np.concatenate([lead, repeated])),
                ((0.0, "en"), (join, code)),
            )
        )
        found.append(
            Recording(
                written(folder / f"{code}>en.wav", np.concatenate([spoken, tail])),
                ((0.0, code), (len(spoken) / SAMPLE_RATE, "en")),
            )
        )
    return found


def written(path: Path, samples: np.ndarray) -> Path:
    """``samples`` (16 kHz float) as a 16-bit WAV file at ``path``."""
    write_wav(path, np.clip(samples, -1, 1) * 32767, SAMPLE_RATE)
    return path


def live_chunks(path: Path, chunk_seconds: float) -> Iterator[tuple[float, np.ndarray]]:
    """``path``'s audio as the follower reads a file written at real time."""
    done = 0.0
    while True:
        chunk = decode_audio_span(path, done, chunk_seconds)
        if not len(chunk.samples) or chunk.end <= done:  # the end, whatever the decoder says
            return
        yield chunk.start, chunk.samples
        done = chunk.end


def score(
    heard: Heard, recording: Recording, start: float, stretches: Sequence[LanguageStretch]
) -> None:
    """Add a chunk's stretches (on its own timeline, from ``start``) to ``heard``."""
    heard.chunks += 1
    spans = on_timeline(start, stretches)
    heard.wrong += is_wrong(recording, spans)
    if len(recording.spoken) > 1:
        join, new = recording.spoken[1]
        if start >= join:
            heard.wrong_after += any(code != new for _, _, code in spans)
        if heard.switch is None:
            heard.switch = next(
                (max(0.0, a - join) for a, b, code in spans if code == new and b > join), None
            )


def on_timeline(
    start: float, stretches: Sequence[LanguageStretch]
) -> list[tuple[float, float, str]]:
    """A chunk's non-empty stretches (on its own timeline, from ``start``) on the
    recording's: (start, end, language)."""
    return [(start + s.start, start + s.end, s.language) for s in stretches if s.end > s.start]


def is_wrong(recording: Recording, spans: Sequence[tuple[float, float, str]]) -> bool:
    """Whether ``spans`` (:func:`on_timeline`) hold a language not spoken there."""
    return any(code not in recording.languages(a, b) for a, b, code in spans)


@dataclass(frozen=True)
class Chunk:
    """One chunk of a recording and how it was heard.

    Attributes:
        settled: The recording's settled language before the chunk (carried).
        alone: Its stretches heard on its own.
        carried: Heard with ``settled``.
    """

    start: float
    samples: np.ndarray
    settled: str | None
    alone: tuple[LanguageStretch, ...]
    carried: tuple[LanguageStretch, ...]


Stretches = Callable[[np.ndarray, str | None], tuple[LanguageStretch, ...]]
"""A chunk's stretches, heard with the recording's settled language (None: alone)."""


@dataclass
class Restarts:
    """Chunks heard after restarts before the restarted run is settled as the recording
    was, and how many of them are wrong with the settled language lost, and kept."""

    chunks: int = 0
    lost: int = 0
    kept: int = 0

    def add(self, other: Restarts) -> None:
        self.chunks += other.chunks
        self.lost += other.lost
        self.kept += other.kept

    def __str__(self) -> str:
        return f"{self.chunks}: {self.lost} -> {self.kept}"


def after_restart(
    recording: Recording, chunks: Sequence[Chunk], first: int, stretches: Stretches
) -> Restarts:
    """A restart before ``chunks[first]``: the chunks heard with the settled language lost
    until the restarted run is settled as the recording was (from there on it hears as
    without a restart), and how many of them are wrong with it lost, and kept (heard as
    ``carried``)."""
    counted = Restarts()
    language = RecordingLanguage()
    for chunk in chunks[first:]:
        if language.settled == chunk.settled:
            break
        found = (
            chunk.alone if language.settled is None else stretches(chunk.samples, language.settled)
        )
        counted.chunks += 1
        counted.lost += is_wrong(recording, on_timeline(chunk.start, found))
        counted.kept += is_wrong(recording, on_timeline(chunk.start, chunk.carried))
        language.heard(found)
    return counted


def faster_whisper_stretches() -> Stretches:
    """A chunk's stretches as the faster-whisper transcriber finds them (``base``)."""
    from faster_whisper import WhisperModel

    model = WhisperModel(str(resolve_model("base", allow_download=False).path), compute_type="int8")
    identify, confirm = whisper_identifier(model), whisper_confirmer(model)

    def stretches(samples: np.ndarray, settled: str | None) -> tuple[LanguageStretch, ...]:
        utterances = VoiceActivity(samples).spans(UTTERANCES)
        return detect_stretches(
            samples, identify, confirm=confirm, utterances=utterances, settled=settled
        )

    return stretches


def openai_whisper_stretches(folder: Path) -> Stretches:
    """A chunk's language as the openai-whisper transcriber finds it, as one stretch:
    ``base``'s weights converted into ``folder`` (:mod:`benchmarks.transcription_speed`)."""
    from benchmarks.transcription_speed import ct2_to_openai_checkpoint
    from llama_index_video.transcription.openai_whisper import OpenAIWhisperTranscriber

    checkpoint = ct2_to_openai_checkpoint(
        resolve_model("base", allow_download=False).path, folder / "base.pt"
    )
    transcriber = OpenAIWhisperTranscriber(model=checkpoint)
    alone: dict[int, tuple[LanguageStretch, ...]] = {}  # the last chunk's, by its samples

    def stretches(samples: np.ndarray, settled: str | None) -> tuple[LanguageStretch, ...]:
        heard = alone.get(id(samples))
        if heard and settled in (None, heard[0].language):
            return heard  # the likeliest language: the head need not hear it again
        with heard_in(RecordingLanguage(settled)):
            info = transcriber.transcribe(samples).info  # the segments are never decoded
        assert info.language is not None and info.language_probability is not None
        found = (LanguageStretch(0.0, info.duration, info.language, info.language_probability),)
        if settled is None:
            alone.clear()
            alone[id(samples)] = found
        return found

    return stretches


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-seconds", nargs="+", type=float, default=[30.0, 10.0])
    parser.add_argument(
        "--held-out", action="store_true", help="material the rule was not fitted on"
    )
    parser.add_argument(
        "--openai-whisper",
        action="store_true",
        help="hear languages as the openai-whisper backend does (base, converted)",
    )
    args = parser.parse_args(argv)

    print(f"load at start: {load_average()}", flush=True)
    print(
        f"{'recording':22} {'chunk':>5} {'chunks':>6} {'wrong':>7} {'switch s':>11} "
        f"{'wrong after':>11} {'CPU s':>11} {'restart':>10} {'restarts':>12}"
    )
    totals = {"alone": Heard(), "carried": Heard()}
    halfway, anywhere = Restarts(), Restarts()
    made = held_out_recordings if args.held_out else recordings
    with tempfile.TemporaryDirectory() as folder:
        stretches = (
            openai_whisper_stretches(Path(folder))
            if args.openai_whisper
            else faster_whisper_stretches()
        )
        for recording in made(Path(folder)):
            for chunk_seconds in args.chunk_seconds:
                alone, carried = Heard(), Heard()
                language = RecordingLanguage()
                chunks: list[Chunk] = []
                for start, samples in live_chunks(recording.path, chunk_seconds):
                    ways = []
                    for heard, settled in ((alone, None), (carried, language.settled)):
                        began = time.process_time()
                        ways.append(stretches(samples, settled))
                        heard.cpu_s += time.process_time() - began
                        score(heard, recording, start, ways[-1])
                    chunks.append(Chunk(start, samples, language.settled, *ways))
                    language.heard(ways[-1])
                middle = after_restart(recording, chunks, len(chunks) // 2, stretches)
                every = Restarts()
                for first in range(1, len(chunks)):
                    every.add(after_restart(recording, chunks, first, stretches))
                halfway.add(middle)
                anywhere.add(every)
                for way, heard in (("alone", alone), ("carried", carried)):
                    total = totals[way]
                    total.chunks += heard.chunks
                    total.wrong += heard.wrong
                    total.wrong_after += heard.wrong_after
                    total.cpu_s += heard.cpu_s
                joined = len(recording.spoken) > 1
                switch = f"{_seconds(alone.switch)} -> {_seconds(carried.switch)}" if joined else ""
                wrong_after = f"{alone.wrong_after} -> {carried.wrong_after}" if joined else ""
                print(
                    f"{recording.path.name:22} {chunk_seconds:5.0f} {alone.chunks:6} "
                    f"{alone.wrong:3} -> {carried.wrong:<2} {switch:>11} {wrong_after:>11} "
                    f"{alone.cpu_s:4.1f} -> {carried.cpu_s:4.1f} "
                    f"{middle!s:>10} {every!s:>12}",
                    flush=True,
                )
    alone, carried = totals["alone"], totals["carried"]
    print(
        f"total: {alone.chunks} chunks, wrong {alone.wrong} -> {carried.wrong}, after a join "
        f"{alone.wrong_after} -> {carried.wrong_after}, "
        f"CPU {alone.cpu_s:.1f} -> {carried.cpu_s:.1f} s; after a restart "
        f"half-way {halfway}, before each chunk {anywhere} (chunks until settled: wrong)"
    )
    print(f"load at end: {load_average()}")
    return 0


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
