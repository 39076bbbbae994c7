"""What finding the spoken language costs English transcription, against a baseline.

    python benchmarks/english_cost.py [--baseline-ref REF] [--rounds 3]
        [--sets examples real real-joined | --files a.mp4 b.flac]

Issue 23's target: the English defaults do not get slower. Each round runs, in turn, one
child process per recipe on each set of English recordings:

- ``default``: ``FasterWhisperTranscriber()`` as a user gets it (``tiny.en``; the
  language checked with the multilingual ``base`` from the ``offline`` extra);
- ``told English``: ``FasterWhisperTranscriber(language="en")``: no check;
- with ``--baseline-ref``, ``default`` as that commit had it (``9de1a4e``: before the
  language check existed).

A child decodes the set's audio first, then times (CPU seconds, ``time.process_time``)
everything a transcription costs: building the transcriber, loading the models, finding
the language, and consuming every segment. Reported per set and recipe: the median CPU
seconds over the rounds, the child's peak RSS, and whether its transcripts equal those
told English (for English recordings the check must change nothing).

Sets: ``examples``, the three English example files (``examples/media``, synthetic
espeak-ng narration, 180 s); ``real``, the real English of
``tests/fixtures/real_speech`` (thirteen AMI meeting excerpts: far-field, many speakers
not native; a phone call) and the LibriVox reader of ``tests/fixtures/speech``, 475 s;
``real-joined``, the same real English joined into one recording of 8 min (each part
followed by a second of silence). The check's cost is mostly per file (it probes a few
blocks of each file, and loads ``base`` once per process), so the same speech costs it
far less as one recording than as fifteen. The machine is shared: the load average is
printed at the start and end.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child imports the version it was given

from benchmarks.baseline import Version, load_average, release, run, today  # noqa: E402

REAL_ENGLISH = [
    *sorted((ROOT / "tests" / "fixtures" / "real_speech").glob("*.flac")),
    ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac",
]


@dataclass(frozen=True)
class FileSet:
    files: list[Path]
    joined: bool = False  # transcribed as one recording, JOIN_GAP_S of silence after each


SETS = {
    "examples": FileSet(sorted((ROOT / "examples" / "media").glob("*.mp[34]"))),
    "real": FileSet(REAL_ENGLISH),
    "real-joined": FileSet(REAL_ENGLISH, joined=True),
}
JOIN_GAP_S = 1.0
MAX_ROUNDS = 10
TOLD_ENGLISH = "told English"


def child(language: str | None, joined: bool, files: list[str]) -> None:
    """Transcribe ``files`` (``joined``: as one recording); one JSON object on stdout (CPU
    s and a digest of the text)."""
    import numpy as np
    from faster_whisper.audio import decode_audio

    from llama_index_video.transcription import FasterWhisperTranscriber
    from llama_index_video.transcription.base import SAMPLE_RATE

    audio = [decode_audio(path, sampling_rate=SAMPLE_RATE) for path in files]
    if joined:
        gap = np.zeros(round(JOIN_GAP_S * SAMPLE_RATE), dtype=np.float32)
        audio = [np.concatenate([part for a in audio for part in (a, gap)])]
    started = time.process_time()
    transcriber = FasterWhisperTranscriber(language=language)
    texts = [
        [(round(s.start, 2), round(s.end, 2), s.text) for s in transcriber.transcribe(a).segments]
        for a in audio
    ]
    cpu = time.process_time() - started
    digest = hashlib.sha256(json.dumps(texts).encode()).hexdigest()
    source = Path(sys.modules["llama_index_video"].__file__ or "").resolve().parents[1]
    heard = sum(len(a) for a in audio) / SAMPLE_RATE
    print(
        json.dumps(
            {
                "cpu_s": cpu,
                "recordings": len(audio),
                "audio_s": heard,
                "transcripts": digest,
                "source": str(source),
            }
        )
    )


def measure(version: Version, language: str | None, chosen: FileSet) -> dict[str, float | str]:
    command = [
        sys.executable,
        __file__,
        "--child",
        language or "",
        "joined" if chosen.joined else "apart",
        *map(str, chosen.files),
    ]
    done = run(command, version.env())
    if done.returncode != 0:
        raise SystemExit(f"{version.name}: the child failed: {done.stderr.strip()[-2000:]}")
    figures: dict[str, float | str] = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["source"] != str(version.source.resolve()):
        raise SystemExit(f"{version.name}: the child imported {figures['source']}")
    figures["peak_rss_mb"] = done.peak_rss_mb
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", help="also measure the default of this git ref")
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds (1-{MAX_ROUNDS})")
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    parser.add_argument("--files", nargs="+", type=Path, help="one set of these files instead")
    args = parser.parse_args(argv)
    if not 1 <= args.rounds <= MAX_ROUNDS:
        parser.error(f"--rounds must be 1-{MAX_ROUNDS}")
    given = [path.resolve() for path in args.files or []]  # children run in their source
    sets = {"given": FileSet(given)} if given else {name: SETS[name] for name in args.sets}
    recipes: dict[str, tuple[Version, str | None]] = {
        "default": (today(), None),
        TOLD_ENGLISH: (today(), "en"),
    }
    if args.baseline_ref:
        recipes[f"default at {args.baseline_ref}"] = (release(args.baseline_ref), None)
    print(f"load average at start {load_average()}")
    for name, chosen in sets.items():
        results: dict[str, list[dict[str, float | str]]] = {recipe: [] for recipe in recipes}
        for _ in range(args.rounds):
            for recipe, (version, language) in recipes.items():
                results[recipe].append(measure(version, language, chosen))
        english = results[TOLD_ENGLISH][0]["transcripts"]
        together = " as one recording" if chosen.joined else ""
        print(f"\n== {name}: {len(chosen.files)} files{together}")
        print(f"{'recipe':24s} {'CPU s':>7s} {'peak MB':>8s}  transcripts as told English")
        for recipe, done in results.items():
            cpu = statistics.median(float(r["cpu_s"]) for r in done)
            rss = statistics.median(float(r["peak_rss_mb"]) for r in done)
            same = all(r["transcripts"] == english for r in done)
            print(f"{recipe:24s} {cpu:7.2f} {rss:8.0f}  {'same' if same else 'differ'}")
    print(f"\nload average at end {load_average()}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2] or None, sys.argv[3] == "joined", sys.argv[4:])
    else:
        main()
