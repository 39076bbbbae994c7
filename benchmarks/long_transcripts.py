"""The stored transcript of long recordings beside faster-whisper's defaults (issue 36).

    python benchmarks/long_transcripts.py [--minutes 20 60] [--baseline-ref REF]
        [--cache DIR] [--json FILE]

For each length, the recording of :mod:`benchmarks.long_speech` (planned by
:mod:`benchmarks.long_speech_script`: espeak-ng voices, synthetic speech, with music,
noise beds and silences; cached outside the repository) is heard, each in a child
process timed as a whole (wall, CPU seconds), by:

- ``ours``: ``llama-index-video ingest`` with its defaults into a fresh index (tiny.en),
  then ``transcript --format json``: the stored transcript (the words a unit repeats
  from the one before, where a long sentence was cut, counted once);
- ``ours at REF`` with ``--baseline-ref``: the same, as that commit had it;
- ``defaults``: faster-whisper's default decoding of the whole file with the same model
  (tiny.en, int8): ``WhisperModel.transcribe(path)`` with no option changed (beam 5,
  temperature fallback 0.0-1.0, each window prompted with the previous text, no VAD).

Reported per recipe: the word error rate against the script, both normalised by
Whisper's own ``EnglishTextNormalizer`` (openai-whisper, in the ``whisper`` extra: "four
hundred and twenty" and "420" are the same words); the spoken facts missing
(:func:`missing_facts`: a fact is heard when one of its answers, normalised alike, is in
the text heard within 2 s of where it was said); for ours, the windows decoded again and
the spans dropped (counted from ingest's log); wall and CPU seconds. The load average is
printed with every figure: the machine is shared. ``--keep DIR`` keeps what each recipe
heard (JSON), and a run given the same ``--keep`` scores what is kept there instead of
hearing it again (its process figures are then blank).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import Version, load_average, release, run, today  # noqa: E402
from benchmarks.long_speech import DEFAULT_CACHE, recording  # noqa: E402
from benchmarks.long_speech_script import FACTS, iter_facts, plan  # noqa: E402
from benchmarks.scoring import error_rate  # noqa: E402

DEFAULTS = "defaults"
NEAR_SECONDS = 2.0
"""A fact counts as heard when its answer is in text heard this close to its span."""
REDECODED = "again ("
"""What ingest's log says of each window it decoded again (:mod:`...transcription.loops`)."""
DROPPED = "dropped what model"
"""What ingest's log says of each span it dropped as a repetition loop (today and before)."""


@dataclass(frozen=True)
class Heard:
    """One stretch of text a recipe heard, on the recording's timeline."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Figures:
    """One recipe on one recording."""

    wer: float
    missing: list[str]
    redecoded: int | None
    dropped: int | None
    wall_s: float
    cpu_s: float


def without_overlap(units: Sequence[Heard], *, most: int = 6) -> list[Heard]:
    """``units`` with the words a unit repeats from the end of the one before removed
    (at most ``most``: where a long sentence was cut with no pause, :mod:`...units`)."""
    kept: list[Heard] = []
    for unit in units:
        words = unit.text.split()
        if kept and unit.start < kept[-1].end:
            before = kept[-1].text.split()
            for size in range(min(most, len(words), len(before)), 0, -1):
                if before[-size:] == words[:size]:
                    words = words[size:]
                    break
        kept.append(Heard(unit.start, unit.end, " ".join(words)))
    return kept


def spoken_words(text: str) -> list[str]:
    """``text`` as Whisper's English normaliser writes it, word by word."""
    from whisper.normalizers import EnglishTextNormalizer

    return EnglishTextNormalizer()(text).split()


def missing_facts(
    heard: Sequence[Heard], facts: dict[str, tuple[float, float]], *, near: float = NEAR_SECONDS
) -> list[str]:
    """The ids of the facts none of whose answers is in the text heard around them."""
    missing = []
    for fact, start, end in iter_facts(facts):
        said = " ".join(h.text for h in heard if h.end >= start - near and h.start <= end + near)
        around = f" {' '.join(spoken_words(said))} "
        if not any(f" {' '.join(spoken_words(answer))} " in around for answer in fact.answer):
            missing.append(fact.id)
    return missing


def reference(minutes: float) -> str:
    """What the recording of ``minutes`` says, in order."""
    return " ".join(item.text for item in plan(minutes) if item.kind == "speech")


def _defaults_child(audio: Path, out: Path) -> None:
    """faster-whisper's defaults on the whole file, the model ours uses by default."""
    from faster_whisper import WhisperModel

    from llama_index_video.transcription.models import DEFAULT_MODEL, resolve_model

    model = WhisperModel(str(resolve_model(DEFAULT_MODEL).path), compute_type="int8")
    segments, _ = model.transcribe(str(audio))
    heard = [Heard(s.start, s.end, s.text.strip()) for s in segments]
    out.write_text(json.dumps([asdict(h) for h in heard]))


def measure(version: Version | None, audio: Path, work: Path) -> tuple[list[Heard], Figures]:
    """What ``version``'s ingest stored for ``audio`` (or the defaults, for None)."""
    out = work / "heard.json"
    timeout = 3600.0
    if version is None:
        me = [sys.executable, str(Path(__file__).resolve()), "--defaults-child"]
        done = run([*me, str(audio), str(out)], today().env(), timeout=timeout)
        _check(DEFAULTS, done.returncode, done.stderr)
        heard = [Heard(**h) for h in json.loads(out.read_text())]
        return heard, Figures(0.0, [], None, None, done.wall_s, done.cpu_s)
    index = work / "index"
    ingest = version.cli("--debug", "ingest", str(audio), "--index", str(index), "--quiet")
    done = run(ingest, version.env(), timeout=timeout)
    _check("ingest", done.returncode, done.stderr)
    shown = run(
        version.cli("transcript", audio.name, "--format", "json", "--index", str(index)),
        version.env(),
    )
    _check("transcript", shown.returncode, shown.stderr)
    units = [Heard(u["start"], u["end"], u["text"]) for u in json.loads(shown.stdout)["units"]]
    log = done.stderr.splitlines()
    return without_overlap(units), Figures(
        0.0,
        [],
        sum(REDECODED in line and "decoded" in line for line in log),
        sum(DROPPED in line for line in log),
        done.wall_s,
        done.cpu_s,
    )


def _check(name: str, returncode: int, stderr: str) -> None:
    if returncode != 0:
        raise SystemExit(f"{name} failed:\n{stderr[-3000:]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", nargs="+", type=float, default=[20.0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--baseline-ref", help="also run ours as this git ref had it")
    parser.add_argument(
        "--recipes",
        nargs="+",
        choices=("ours", "baseline", DEFAULTS),
        default=("ours", "baseline", DEFAULTS),
        help="run only these (several runs of the script can then share a busy machine)",
    )
    parser.add_argument("--json", type=Path, help="append the figures here (JSON lines)")
    parser.add_argument("--keep", type=Path, help="keep (or score again) what each recipe heard")
    parser.add_argument("--defaults-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.defaults_child:
        _defaults_child(*args.defaults_child)
        return 0
    recipes: dict[str, Version | None] = {"ours": today()} if "ours" in args.recipes else {}
    if args.baseline_ref and "baseline" in args.recipes:
        recipes[f"ours at {args.baseline_ref}"] = release(args.baseline_ref)
    if DEFAULTS in args.recipes:
        recipes[DEFAULTS] = None
    print("All speech is synthetic (espeak-ng voices), heard through faster-whisper tiny.en.")
    for minutes in args.minutes:
        audio, facts, seconds = recording(minutes, args.cache)
        said = reference(minutes)
        print(
            f"\n## {minutes:g} min ({seconds:.0f} s, {len(said.split())} words, "
            f"{len(facts)}/{len(FACTS)} facts)\n"
        )
        print(
            "| recipe | WER | facts missing | windows decoded again | spans dropped "
            "| wall s | CPU s | load before / after |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, version in recipes.items():
            load = load_average()
            label = name.replace(" ", "_")
            kept = args.keep / f"{minutes:g}min-{label}.json" if args.keep else None
            if kept is not None and kept.is_file():  # heard in an earlier run: its figures
                saved = json.loads(kept.read_text())
                heard = [Heard(**h) for h in saved.pop("heard")]
                process = Figures(**saved)
            else:
                with tempfile.TemporaryDirectory(prefix="long-transcripts-") as folder:
                    heard, process = measure(version, audio, Path(folder))
            if kept is not None and not kept.is_file():
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(
                    json.dumps({**asdict(process), "heard": [asdict(h) for h in heard]})
                )
            hypothesis = spoken_words(" ".join(h.text for h in heard))
            figures = Figures(
                wer=round(error_rate(spoken_words(said), hypothesis), 4),
                missing=missing_facts(heard, facts),
                redecoded=process.redecoded,
                dropped=process.dropped,
                wall_s=round(process.wall_s, 1),
                cpu_s=round(process.cpu_s, 1),
            )
            missing = ", ".join(figures.missing) or "none"
            print(
                f"| {name} | {figures.wer:.1%} | {len(figures.missing)} ({missing}) | "
                f"{_count(figures.redecoded)} | {_count(figures.dropped)} | {figures.wall_s} | "
                f"{figures.cpu_s} | {load} / {load_average()} |",
                flush=True,
            )
            if args.json:
                with args.json.open("a") as handle:
                    line = {"minutes": minutes, "recipe": name, **asdict(figures)}
                    handle.write(json.dumps(line) + "\n")
    return 0


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


if __name__ == "__main__":
    raise SystemExit(main())
