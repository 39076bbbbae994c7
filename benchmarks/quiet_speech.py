"""A quiet voice after louder speech: what the VAD keeps of it, one pass against each
silence heard again (issue 36 item 4).

    python benchmarks/quiet_speech.py [--loud NAME ...] [--transcribe] [--long FILE]

Material, all **real speech** but the non-speech beds: each loud recording of
:data:`LOUD` (AMI meetings, a phone call, FLEURS readings, a LibriVox reading, from
``tests/fixtures``), 3 s of silence, then the quiet FLEURS French reading of
``tests/fixtures/quiet_speech`` (-62 dBFS; speech from 1.8 s to its end, 10.2 s). Three
figures, both ways in the same run (:func:`~llama_index_video.transcription.vad.silero_pass`
is the one pass from the start that was all the VAD did before):

- seconds of the quiet sentence the transcription's VAD keeps (of 8.4 s);
- with ``--transcribe``: seconds of it under a transcribed segment, and its words;
- seconds heard as speech in 60 s of music or noise after the loud speech (the
  synthetic chords and noise bed of :mod:`benchmarks.long_speech_script`, at two levels
  each): speech the re-hearing would invent;
- with ``--long``: the VAD's CPU seconds over a long real recording, and the seconds of
  speech the re-hearing adds there.

The re-hearing's one parameter (a silence of 2 s or more is heard again) is the pause
that ends a stretch of speech for the transcription, not fitted on any of these.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.long_speech_script import _music  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
QUIET = FIXTURES / "quiet_speech" / "fr_fleurs_quiet.json"
LOUD = {
    "ami_dev00": "real_speech/ami_dev00.flac",
    "ami_dev01": "real_speech/ami_dev01.flac",
    "ami_trn00": "real_speech/ami_trn00.flac",
    "ami_tst01": "real_speech/ami_tst01.flac",
    "phone_call_2f": "real_speech/phone_call_2f.flac",
    "de_fleurs": "real_languages/de_fleurs.ogg",
    "es_fleurs": "real_languages/es_fleurs.ogg",
    "pt_fleurs": "real_languages/pt_fleurs.ogg",
    "librivox_en": "speech/librivox_en.flac",
}
SILENCE_S = 3.0
BEDS_S = 60.0
SAMPLE_RATE = 16_000

Hearing = Callable[[np.ndarray], np.ndarray]


def _decode(path: Path) -> np.ndarray:
    from faster_whisper.audio import decode_audio

    return np.asarray(decode_audio(str(path), sampling_rate=SAMPLE_RATE), np.float32)


def _kept(audio: np.ndarray, hear: Hearing, start: float, end: float) -> float:
    """Seconds between ``start`` and ``end`` the transcription's VAD keeps."""
    from llama_index_video.transcription import vad

    spans = vad.speech_spans(hear(audio), len(audio), vad.TRANSCRIPTION)
    first, last = start * SAMPLE_RATE, end * SAMPLE_RATE
    return sum(max(0.0, min(last, b) - max(first, a)) for a, b in spans) / SAMPLE_RATE


def _transcribed(audio: np.ndarray, hear: Hearing, start: float, end: float) -> str:
    """Seconds of ``start``-``end`` under a segment, and its words, with ``hear`` as VAD."""
    from llama_index_video.transcription import FasterWhisperTranscriber, vad

    kept = vad.speech_probabilities
    vad.speech_probabilities = hear  # the VoiceActivity's hearing, for this run only
    try:
        segments = list(FasterWhisperTranscriber().transcribe(audio).segments)
    finally:
        vad.speech_probabilities = kept
    over = [s for s in segments if s.end > start and s.start < end]
    seconds = sum(min(end, s.end) - max(start, s.start) for s in over)
    words = " ".join(s.text for s in over)
    return f"{seconds:.1f} s {words[:60]!r}"


def main(argv: Sequence[str] | None = None) -> int:
    from llama_index_video.transcription import vad

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loud", nargs="+", choices=sorted(LOUD), default=sorted(LOUD))
    parser.add_argument("--transcribe", action="store_true", help="also transcribe each join")
    parser.add_argument("--long", type=Path, help="a long recording to time the VAD on")
    args = parser.parse_args(argv)
    hearings: dict[str, Hearing] = {
        "one pass": vad.silero_pass,
        "silences heard again": vad.speech_probabilities,
    }
    about = json.loads(QUIET.read_text("utf-8"))
    quiet = _decode(QUIET.parent / about["audio"])
    silence = np.zeros(round(SILENCE_S * SAMPLE_RATE), np.float32)
    print(f"load {load_average()}; real speech; quiet sentence {about['speech']} s of its clip")
    print(f"{'loud speech before':<16} {'VAD keeps (s of quiet sentence)':>34}")
    for name in args.loud:
        loud = _decode(FIXTURES / LOUD[name])
        audio = np.concatenate([loud, silence, quiet])
        offset = (len(loud) + len(silence)) / SAMPLE_RATE
        start, end = (offset + at for at in about["speech"])
        kept = [f"{_kept(audio, hear, start, end):.2f}" for hear in hearings.values()]
        print(f"{name:<16} {' -> '.join(kept):>34}")
        if args.transcribe:
            for label, hear in hearings.items():
                print(f"    transcribed ({label}): {_transcribed(audio, hear, start, end)}")
    loud = _decode(FIXTURES / LOUD["es_fleurs"])
    rng = np.random.default_rng(22)
    length = round(BEDS_S * SAMPLE_RATE)
    beds = {
        "music 0.25": _music(length, rng, level=0.25),
        "music 0.05": _music(length, rng, level=0.05),
        "noise 0.015": rng.normal(0, 0.015, length).astype(np.float32),
        "noise 0.05": rng.normal(0, 0.05, length).astype(np.float32),
    }
    print(f"synthetic beds ({BEDS_S:g} s) after es_fleurs and 3 s of silence: speech heard (s)")
    for name, bed in beds.items():
        audio = np.concatenate([loud, silence, bed])
        start = (len(loud) + len(silence)) / SAMPLE_RATE
        heard = [f"{_kept(audio, hear, start, start + BEDS_S):.2f}" for hear in hearings.values()]
        print(f"{name:<16} {' -> '.join(heard):>34}")
    if args.long:
        audio = _decode(args.long)
        print(f"{args.long.name} ({len(audio) / SAMPLE_RATE / 60:.1f} min):")
        for label, hear in hearings.items():
            started = time.process_time()
            heard = hear(audio)
            cpu = time.process_time() - started
            spans = vad.speech_spans(heard, len(audio), vad.TRANSCRIPTION)
            speech = sum(b - a for a, b in spans) / SAMPLE_RATE
            print(f"    {label}: VAD {cpu:.2f} CPU s, speech kept {speech:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
