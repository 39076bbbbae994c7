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

Per recording and chunk length: the chunks, those holding a stretch in a language not
spoken in their span (*wrong*, alone -> carried), and for a join, the seconds from the
join to the first stretch in the new language (*switch*) and the chunks after it
heard in another language; the CPU seconds of the language check (VAD and probes) of
both ways. The load average is printed at the start and end.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
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
from llama_index_video.transcription.recording_language import RecordingLanguage  # noqa: E402
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
    cut = lead[: round(LEAD_SECONDS * SAMPLE_RATE)]
    for code, paths in others.items():
        readings = np.concatenate([decode_audio(path) for path in paths])
        repeated = np.tile(readings, math.ceil(AFTER_JOIN_SECONDS * SAMPLE_RATE / len(readings)))
        join = len(cut) / SAMPLE_RATE
        found.append(
            Recording(
                written(folder / f"en>{code}.wav", np.concatenate([cut, repeated])),
                ((0.0, "en"), (join, code)),
            )
        )
        found.append(
            Recording(
                written(folder / f"{code}>en.wav", np.concatenate([readings, lead])),
                ((0.0, code), (len(readings) / SAMPLE_RATE, "en")),
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
    spans = [(start + s.start, start + s.end, s.language) for s in stretches if s.end > s.start]
    heard.wrong += any(code not in recording.languages(a, b) for a, b, code in spans)
    if len(recording.spoken) > 1:
        join, new = recording.spoken[1]
        if start >= join:
            heard.wrong_after += any(code != new for _, _, code in spans)
        if heard.switch is None:
            heard.switch = next(
                (max(0.0, a - join) for a, b, code in spans if code == new and b > join), None
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-seconds", nargs="+", type=float, default=[30.0, 10.0])
    args = parser.parse_args(argv)

    from faster_whisper import WhisperModel

    from llama_index_video.transcription.models import resolve_model

    model = WhisperModel(str(resolve_model("base", allow_download=False).path), compute_type="int8")
    identify, confirm = whisper_identifier(model), whisper_confirmer(model)

    def stretches(samples: np.ndarray, settled: str | None) -> tuple[LanguageStretch, ...]:
        utterances = VoiceActivity(samples).spans(UTTERANCES)
        return detect_stretches(
            samples, identify, confirm=confirm, utterances=utterances, settled=settled
        )

    print(f"load at start: {load_average()}", flush=True)
    print(
        f"{'recording':22} {'chunk':>5} {'chunks':>6} {'wrong':>7} {'switch s':>11} "
        f"{'wrong after':>11} {'CPU s':>11}"
    )
    totals = {"alone": Heard(), "carried": Heard()}
    with tempfile.TemporaryDirectory() as folder:
        for recording in recordings(Path(folder)):
            for chunk_seconds in args.chunk_seconds:
                alone, carried = Heard(), Heard()
                language = RecordingLanguage()
                for start, samples in live_chunks(recording.path, chunk_seconds):
                    for heard, settled in ((alone, None), (carried, language.settled)):
                        began = time.process_time()
                        found = stretches(samples, settled)
                        heard.cpu_s += time.process_time() - began
                        score(heard, recording, start, found)
                    language.heard(found)
                for way, heard in (("alone", alone), ("carried", carried)):
                    total = totals[way]
                    total.chunks += heard.chunks
                    total.wrong += heard.wrong
                    total.wrong_after += heard.wrong_after
                    total.cpu_s += heard.cpu_s
                joined = len(recording.spoken) > 1
                switch = f"{_seconds(alone.switch)} -> {_seconds(carried.switch)}" if joined else ""
                after = f"{alone.wrong_after} -> {carried.wrong_after}" if joined else ""
                print(
                    f"{recording.path.name:22} {chunk_seconds:5.0f} {alone.chunks:6} "
                    f"{alone.wrong:3} -> {carried.wrong:<2} {switch:>11} {after:>11} "
                    f"{alone.cpu_s:4.1f} -> {carried.cpu_s:4.1f}",
                    flush=True,
                )
    alone, carried = totals["alone"], totals["carried"]
    print(
        f"total: {alone.chunks} chunks, wrong {alone.wrong} -> {carried.wrong}, after a join "
        f"{alone.wrong_after} -> {carried.wrong_after}, "
        f"CPU {alone.cpu_s:.1f} -> {carried.cpu_s:.1f} s"
    )
    print(f"load at end: {load_average()}")
    return 0


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
