"""What finding the spoken language costs, per recording, today and at another commit.

    python benchmarks/language_check.py [--baseline-ref REF] [--rounds 3] [--files ...]
        [--held-out]

Before an English-only model transcribes, ``llama_index_video.transcription.language``
probes the audio with the multilingual ``base`` model (offline weights from the
``offline`` extra). Each round runs one child process per version (alternating order):
it loads ``base`` (timed) and finds the language of every file, timing the VAD and the
probes apart, and counting the probes and the seconds of audio they encode. Reported per
file: the stretches found (language and probability), probes, seconds heard and CPU
seconds (medians over rounds); per version, the load and the child's peak RSS.

Material: the English example media (``examples/media``: synthetic espeak-ng narration)
and the language fixtures of ``tests/fixtures/speech`` (synthetic German, Spanish, French
and English-then-German; 20 s each of human German and Spanish from silero-vad's test
data; faster-whisper's 60 s English-then-German test recording), and the real English of
``tests/fixtures/real_speech`` (AMI meeting excerpts, many speakers not native, far-field;
a phone call), which must come out English, and the real readers of seven other
languages in ``tests/fixtures/real_languages`` (FLEURS, Common Voice, Multilingual
LibriSpeech, AISHELL-1, the Arabic Speech Corpus), which must not. ``--held-out`` adds
short espeak-ng recordings (synthetic) in languages the check was not tuned on and in
four English accents (``held_out_languages.json``), made in a temporary folder. A block
not surely English is written down (``language.whisper_confirmer``); "written" counts
those blocks and, in brackets, how many of them were written best in English. The
machine is shared: the load average is printed at the start and end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child imports the version it was given

from benchmarks.baseline import Version, load_average, release, run, today  # noqa: E402

SPEECH = ROOT / "tests" / "fixtures" / "speech"
REAL_SPEECH = ROOT / "tests" / "fixtures" / "real_speech"
REAL_LANGUAGES = ROOT / "tests" / "fixtures" / "real_languages"
EXAMPLES = ROOT / "examples" / "media"
DEFAULT_FILES = [
    EXAMPLES / "ozone_explainer.mp4",
    EXAMPLES / "checkout_deep_dive.mp4",
    EXAMPLES / "team_sync.mp3",
    *(
        SPEECH / f"{name}.ogg"
        for name in ("silero_de", "silero_es", "meeting_de", "sales_es", "budget_fr")
    ),
    SPEECH / "mixed_en_de.ogg",
    SPEECH / "license_en_de.ogg",
    *sorted(REAL_SPEECH.glob("*.flac")),
    *(
        REAL_LANGUAGES / json.loads(manifest.read_text(encoding="utf-8"))["audio"]
        for manifest in sorted(REAL_LANGUAGES.glob("*.json"))
    ),
]
HELD_OUT = Path(__file__).with_name("held_out_languages.json")
MAX_ROUNDS = 20


def _utterances(audio: Any) -> list[tuple[int, int]]:
    """Where the check hears speech: ``vad`` since 2026-12-04, ``speech_regions`` before."""
    try:
        from llama_index_video.transcription import vad
    except ImportError:
        from llama_index_video.transcription import language

        return language.speech_regions(audio)  # type: ignore[attr-defined]
    return vad.VoiceActivity(audio).spans(vad.UTTERANCES)


def child(files: Sequence[Path]) -> None:
    """Load ``base`` and find the language of each file; one JSON object on stdout."""
    from faster_whisper import WhisperModel
    from faster_whisper.audio import decode_audio

    from llama_index_video.transcription import language
    from llama_index_video.transcription.base import SAMPLE_RATE
    from llama_index_video.transcription.models import resolve_model

    started = time.process_time()
    folder = resolve_model("base", allow_download=False).path
    model = WhisperModel(str(folder), compute_type="int8")
    identify = language.whisper_identifier(model)
    confirmer = getattr(language, "whisper_confirmer", None)  # absent before 2026-12-04
    confirm = confirmer(model) if confirmer else None
    figures: dict[str, object] = {
        "load_cpu_s": time.process_time() - started,
        "package": str(Path(language.__file__).resolve()),
        "files": {},
    }
    for path in files:
        audio = decode_audio(str(path), sampling_rate=SAMPLE_RATE)
        heard: list[float] = []

        def counted(speech, heard=heard):  # type: ignore[no-untyped-def]
            heard.append(len(speech) / SAMPLE_RATE)
            return identify(speech)

        written: list[str] = []

        def confirmed(speech, candidates, written=written):  # type: ignore[no-untyped-def]
            written.append(confirm(speech, candidates))  # type: ignore[misc]
            return written[-1]

        started = time.process_time()
        utterances = _utterances(audio)
        vad_s = time.process_time() - started
        extra: dict[str, Any] = {"confirm": confirmed} if confirm else {}
        stretches = language.detect_stretches(audio, counted, utterances=utterances, **extra)
        figures["files"][path.name] = {  # type: ignore[index]
            "vad_cpu_s": vad_s,
            "probe_cpu_s": time.process_time() - started - vad_s,
            "probes": len(heard),
            "seconds_heard": sum(heard),
            "written": f"{len(written)} ({written.count('en')} en)",
            "found": " ".join(
                f"{s.language}({s.probability:.2f})@{s.start:.1f}" for s in stretches
            ),
        }
    print(json.dumps(figures))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds (1-{MAX_ROUNDS})")
    parser.add_argument("--baseline-ref", help="also measure the code of this git ref")
    parser.add_argument("--held-out", action="store_true", help="add held_out_languages.json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    files = [path.resolve() for path in args.files]
    with tempfile.TemporaryDirectory() as folder:
        if args.held_out:
            files += _speak(HELD_OUT, Path(folder))
        return _measure(parser, args, files)


def _speak(texts: Path, folder: Path) -> list[Path]:
    """Each recording of ``texts`` read by its espeak-ng voice into a WAV in ``folder``."""
    made = []
    for voice, text in json.loads(texts.read_text(encoding="utf-8"))["recordings"].items():
        path = folder / f"{voice}.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(path), text], check=True)
        made.append(path)
    return made


def _measure(parser: argparse.ArgumentParser, args: argparse.Namespace, files: list[Path]) -> int:
    if not (args.child or 1 <= args.rounds <= MAX_ROUNDS):
        parser.error(f"--rounds must be within 1..{MAX_ROUNDS}")
    if args.child:
        child(files)
        return 0
    # Imported here: these put today's checkout first on sys.path, which a child must not.
    from benchmarks.ingest_speed import machine

    versions: dict[str, Version] = {"today": today()}
    if args.baseline_ref:
        versions[args.baseline_ref] = release(args.baseline_ref)
    print(f"machine: {machine()}; load average at start {load_average()}")
    results: dict[str, list[dict]] = {name: [] for name in versions}
    peaks: dict[str, list[float]] = {name: [] for name in versions}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--files"]
    for round_ in range(args.rounds):
        for name in list(versions) if round_ % 2 == 0 else list(versions)[::-1]:
            done = run([*command, *map(str, files)], versions[name].env())
            if done.returncode != 0:
                raise SystemExit(f"{name} failed:\n{done.stderr}")
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            if not Path(figures["package"]).is_relative_to(versions[name].source.resolve()):
                raise SystemExit(f"{name} ran the code in {figures['package']}")
            results[name].append(figures)
            peaks[name].append(done.peak_rss_mb)
    print(f"load average at end {load_average()}")
    for name, rounds in results.items():
        load = statistics.median(r["load_cpu_s"] for r in rounds)
        print(f"\n== {name}: base loaded in {load:.2f} CPU s; peak RSS {max(peaks[name]):.0f} MB")
        print(
            f"{'file':24} {'found':34} {'probes':>6} {'heard s':>8} {'written':>9} "
            f"{'VAD s':>6} {'probes s':>8}"
        )
        total = 0.0
        for path in files:
            per = [r["files"][path.name] for r in rounds]
            vad = statistics.median(p["vad_cpu_s"] for p in per)
            probes = statistics.median(p["probe_cpu_s"] for p in per)
            total += vad + probes
            print(
                f"{path.name:24} {per[0]['found']:34} {per[0]['probes']:6d} "
                f"{per[0]['seconds_heard']:8.1f} {per[0].get('written', '-'):>9} "
                f"{vad:6.2f} {probes:8.2f}"
            )
        print(f"{'all files, VAD + probes':24} {total:.2f} CPU s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
