"""The stored transcript of long recordings beside faster-whisper's defaults (issue 36).

    python benchmarks/long_transcripts.py [--real NAME ...] [--hour] [--minutes 20 60]
        [--baseline-ref REF] [--cache DIR] [--json FILE] [--keep DIR]

Two kinds of long recording, all heard in the same run:

- ``--real`` (default: all of :data:`benchmarks.long_real_speech.RECORDINGS`): **real
  human speech**, kept in ``benchmarks/long_real/``: the clips of one reader joined end
  to end (real speech, not a real long recording), the reference being each clip's
  transcript at its place;
- ``--hour``: the kept real recordings of :data:`benchmarks.long_real_speech.HOUR`
  joined into one file of an hour (**real speech**, two readers; made once in
  ``--cache``);
- ``--minutes``: the recording of :mod:`benchmarks.long_speech` (planned by
  :mod:`benchmarks.long_speech_script`: espeak-ng voices, **synthetic speech**, with
  music, noise beds and silences; cached outside the repository).

Each is heard, each in a child process timed as a whole (wall, CPU seconds), by:

- ``ours``: ``llama-index-video ingest`` with its defaults into a fresh index (tiny.en),
  then ``transcript --format json``: the stored transcript (the words a unit repeats
  from the one before, where a long sentence was cut, counted once);
- ``ours at REF`` with ``--baseline-ref``: the same, as that commit had it;
- ``unprompted``: ours with ``FasterWhisperTranscriber(condition_on_previous_text=False)``
  (each window decoded with no prompt: ours' decoding before prompting was its default,
  see :mod:`llama_index_video.transcription.faster_decoding`), through the same ingest;
- ``prompted+fallback``: ours with faster-whisper's temperature fallback
  (``temperature=FALLBACK``): faster-whisper's own prompting over ours' clips, reset
  after a window decoded hotter than 0.5 (it samples at random);
- ``defaults``: faster-whisper's default decoding of the whole file with the same model
  (tiny.en, int8): ``WhisperModel.transcribe(path)`` with no option changed (beam 5,
  temperature fallback 0.0-1.0, each window prompted with the previous text, no VAD).

Reported per recipe: the word error rate against the reference, both normalised by
Whisper's own ``EnglishTextNormalizer`` (openai-whisper, in the ``whisper`` extra: "four
hundred and twenty" and "420" are the same words); the spoken facts heard, and those the
defaults hear that the recipe lacks. A fact of the synthetic recording is one of its
planted ``FACTS`` (:func:`missing_facts`: heard when one of its answers, normalised
alike, is in the text heard within 2 s of where it was said); a fact of a real
recording is a word pair of a clip's reference not made of stop words alone
(:func:`real_facts`), heard when the text heard within 2 s of the clip holds it. For
ours, the windows decoded again and the spans dropped (counted from ingest's log);
wall and CPU seconds. The load average is printed with every figure: the machine is
shared. ``--keep DIR`` keeps what each recipe heard (JSON), and a run given the same
``--keep`` scores what is kept there instead of hearing it again (its process figures
are then blank).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import Version, load_average, release, run, today  # noqa: E402
from benchmarks.long_real_speech import HOUR, RECORDINGS, Turn, joined, load_recording  # noqa: E402
from benchmarks.long_speech import DEFAULT_CACHE, recording  # noqa: E402
from benchmarks.long_speech_script import iter_facts, plan  # noqa: E402
from benchmarks.scoring import error_rate  # noqa: E402

DEFAULTS = "defaults"
UNPROMPTED = "unprompted"
WITH_FALLBACK = "prompted+fallback"
FALLBACK = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
"""faster-whisper's default temperatures."""
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
    heard: list[str]
    redecoded: int | None
    dropped: int | None
    wall_s: float
    cpu_s: float
    parts: dict[str, float] = field(default_factory=dict)
    """The word error rate on each part of a joined recording (:attr:`Material.parts`)."""


@dataclass(frozen=True)
class Material:
    """A long recording, what it says, and which of its facts a transcript heard."""

    name: str
    audio: Path
    said: str
    facts: int
    heard: Callable[[Sequence[Heard]], list[str]]
    parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Part:
    """One recording of a joined one: where it is and what it says."""

    name: str
    start: float
    end: float
    said: str


def part_error_rate(part: Part, heard: Sequence[Heard]) -> float:
    """The word error rate of what was heard in ``part`` (units by their middle)."""
    inside = [h.text for h in heard if part.start <= (h.start + h.end) / 2 < part.end]
    return error_rate(spoken_words(part.said), spoken_words(" ".join(inside)))


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


def _around(heard: Sequence[Heard], start: float, end: float, near: float) -> list[str]:
    """The words heard from ``near`` seconds before ``start`` to as long after ``end``."""
    said = " ".join(h.text for h in heard if h.end >= start - near and h.start <= end + near)
    return spoken_words(said)


def missing_facts(
    heard: Sequence[Heard], facts: dict[str, tuple[float, float]], *, near: float = NEAR_SECONDS
) -> list[str]:
    """The ids of the facts none of whose answers is in the text heard around them."""
    missing = []
    for fact, start, end in iter_facts(facts):
        around = f" {' '.join(_around(heard, start, end, near))} "
        if not any(f" {' '.join(spoken_words(answer))} " in around for answer in fact.answer):
            missing.append(fact.id)
    return missing


def real_facts(turns: Sequence[Turn]) -> list[tuple[str, Turn, tuple[str, str]]]:
    """The facts of a real recording: each word pair of a clip's reference (normalised)
    with a word that is not a stop word, once per clip, as ``(id, clip, pair)``."""
    from llama_index_video.search.relevance import STOPWORDS

    facts = []
    for turn in turns:
        words = spoken_words(turn.text)
        pairs = dict.fromkeys(itertools.pairwise(words))
        facts += [
            (f"{turn.id}:{a} {b}", turn, (a, b))
            for a, b in pairs
            if a not in STOPWORDS or b not in STOPWORDS
        ]
    return facts


def heard_real_facts(
    heard: Sequence[Heard], turns: Sequence[Turn], *, near: float = NEAR_SECONDS
) -> list[str]:
    """The ids of :func:`real_facts` whose word pair is in the text heard around its clip."""
    found = []
    pairs_near: dict[Turn, set[tuple[str, str]]] = {}
    for fact, turn, pair in real_facts(turns):
        if turn not in pairs_near:  # by the clip itself: two readings may share clip ids
            words = _around(heard, turn.start, turn.end, near)
            pairs_near[turn] = set(itertools.pairwise(words))
        if pair in pairs_near[turn]:
            found.append(fact)
    return found


def real_material(name: str, cache: Path | None = None) -> Material:
    """A recording of ``benchmarks/long_real/``, or with ``cache`` the hour they make
    (:data:`HOUR`, joined there)."""
    audio, turns = joined(HOUR, cache) if cache is not None else load_recording(name)
    parts: list[Part] = []
    if cache is not None:
        at = 0
        for each in HOUR:
            own = turns[at : at + len(load_recording(each)[1])]
            at += len(own)
            said = " ".join(turn.text for turn in own)
            parts.append(Part(each, own[0].start, own[-1].end + 0.25, said))
    return Material(
        name=f"{name} (real speech)",
        audio=audio,
        said=" ".join(turn.text for turn in turns),
        facts=len(real_facts(turns)),
        heard=lambda heard: heard_real_facts(heard, turns),
        parts=tuple(parts),
    )


def synthetic_material(minutes: float, cache: Path) -> Material:
    """The synthetic recording of ``minutes``."""
    audio, facts, _ = recording(minutes, cache)

    def heard_facts(heard: Sequence[Heard]) -> list[str]:
        missing = set(missing_facts(heard, facts))
        return [fact for fact in facts if fact not in missing]

    said = " ".join(item.text for item in plan(minutes) if item.kind == "speech")
    return Material(f"{minutes:g} min (synthetic speech)", audio, said, len(facts), heard_facts)


def _defaults_child(audio: Path, out: Path) -> None:
    """faster-whisper's defaults on the whole file, the model ours uses by default."""
    from faster_whisper import WhisperModel

    from llama_index_video.transcription.models import DEFAULT_MODEL, resolve_model

    model = WhisperModel(str(resolve_model(DEFAULT_MODEL).path), compute_type="int8")
    segments, _ = model.transcribe(str(audio))
    heard = [Heard(s.start, s.end, s.text.strip()) for s in segments]
    out.write_text(json.dumps([asdict(h) for h in heard]))


def measure(
    version: Version | None, audio: Path, work: Path, *, decoding: str | None = None
) -> tuple[list[Heard], Figures]:
    """What ``version``'s ingest stored for ``audio`` (or the defaults, for None), its
    transcriber decoding as the recipe ``decoding`` says (:data:`UNPROMPTED` or
    :data:`WITH_FALLBACK`; None: its defaults)."""
    out = work / "heard.json"
    timeout = 3600.0
    if version is None:
        me = [sys.executable, str(Path(__file__).resolve()), "--defaults-child"]
        done = run([*me, str(audio), str(out)], today().env(), timeout=timeout)
        _check(DEFAULTS, done.returncode, done.stderr)
        heard = [Heard(**h) for h in json.loads(out.read_text())]
        return heard, Figures(0.0, [], None, None, done.wall_s, done.cpu_s)
    index = work / "index"
    command = ("--debug", "ingest", str(audio), "--index", str(index), "--quiet")
    me = [sys.executable, str(Path(__file__).resolve()), "--decoding-cli", str(decoding)]
    ingest = [*me, *command] if decoding else version.cli(*command)
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


def _decoding_cli(argv: list[str]) -> int:
    """The command line with every transcriber it builds unprompted for
    :data:`UNPROMPTED`, with the fallback for :data:`WITH_FALLBACK` (``argv[0]``, the
    recipe: the CLI has no option for either)."""
    from dataclasses import dataclass

    from llama_index_video.cli.main import main as cli
    from llama_index_video.transcription import faster

    recipe = argv.pop(0)

    @dataclass(frozen=True, kw_only=True)
    class Recipe(faster.FasterWhisperTranscriber):
        condition_on_previous_text: bool = recipe != UNPROMPTED
        temperature: float | tuple[float, ...] = FALLBACK if recipe == WITH_FALLBACK else 0.0

    faster.FasterWhisperTranscriber = Recipe  # type: ignore[misc]
    return cli(argv)


def _check(name: str, returncode: int, stderr: str) -> None:
    if returncode != 0:
        raise SystemExit(f"{name} failed:\n{stderr[-3000:]}")


def hear(
    material: Material, recipes: dict[str, Version | None], keep: Path | None
) -> dict[str, tuple[Figures, str]]:
    """Each recipe's figures on ``material`` and the load before / after it."""
    figures: dict[str, tuple[Figures, str]] = {}
    for name, version in recipes.items():
        load_before = load_average()
        label = f"{material.audio.stem}-{name.replace(' ', '_')}"
        kept = keep / f"{label}.json" if keep else None
        if kept is not None and kept.is_file():  # heard in an earlier run: its figures
            saved = json.loads(kept.read_text())
            heard = [Heard(**h) for h in saved.pop("heard")]
            process = Figures(**{**saved, "heard": []})
        else:
            with tempfile.TemporaryDirectory(prefix="long-transcripts-") as folder:
                heard, process = measure(
                    version,
                    material.audio,
                    Path(folder),
                    decoding=name if name in (UNPROMPTED, WITH_FALLBACK) else None,
                )
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                saved = {**asdict(process), "heard": [asdict(h) for h in heard]}
                kept.write_text(json.dumps(saved))
        hypothesis = spoken_words(" ".join(h.text for h in heard))
        figures[name] = (
            Figures(
                wer=round(error_rate(spoken_words(material.said), hypothesis), 4),
                heard=material.heard(heard),
                redecoded=process.redecoded,
                dropped=process.dropped,
                wall_s=round(process.wall_s, 1),
                cpu_s=round(process.cpu_s, 1),
                parts={p.name: round(part_error_rate(p, heard), 4) for p in material.parts},
            ),
            f"{load_before} / {load_average()}",
        )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [source.name for source in RECORDINGS]
    parser.add_argument("--real", nargs="*", choices=names, default=names)
    parser.add_argument("--hour", action="store_true", help="also the hour of real speech")
    parser.add_argument("--minutes", nargs="*", type=float, default=[20.0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--baseline-ref", help="also run ours as this git ref had it")
    parser.add_argument(
        "--recipes",
        nargs="+",
        choices=("ours", "baseline", UNPROMPTED, WITH_FALLBACK, DEFAULTS),
        default=("ours", "baseline", UNPROMPTED, WITH_FALLBACK, DEFAULTS),
        help="run only these (several runs of the script can then share a busy machine)",
    )
    parser.add_argument("--json", type=Path, help="append the figures here (JSON lines)")
    parser.add_argument("--keep", type=Path, help="keep (or score again) what each recipe heard")
    parser.add_argument("--defaults-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--decoding-cli", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.decoding_cli is not None:
        return _decoding_cli(args.decoding_cli)
    if args.defaults_child:
        _defaults_child(*args.defaults_child)
        return 0
    recipes: dict[str, Version | None] = {"ours": today()} if "ours" in args.recipes else {}
    if args.baseline_ref and "baseline" in args.recipes:
        recipes[f"ours at {args.baseline_ref}"] = release(args.baseline_ref)
    for decoding in (UNPROMPTED, WITH_FALLBACK):
        if decoding in args.recipes:
            recipes[decoding] = today()
    if DEFAULTS in args.recipes:
        recipes[DEFAULTS] = None
    print("Heard through faster-whisper tiny.en; each recording says whether its speech is real.")
    materials = [real_material(name) for name in args.real]
    materials += [real_material("hour", args.cache.parent / "long_real")] if args.hour else []
    materials += [synthetic_material(minutes, args.cache) for minutes in args.minutes]
    for material in materials:
        print(f"\n## {material.name}: {len(material.said.split())} words, {material.facts} facts\n")
        print(
            "| recipe | WER | facts heard | facts the defaults hear that it lacks "
            "| windows decoded again | spans dropped | wall s | CPU s | load before / after |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        figures = hear(material, recipes, args.keep)
        by_defaults = set(figures[DEFAULTS][0].heard) if DEFAULTS in figures else None
        for name, (result, loads) in figures.items():
            lacks = "-" if by_defaults is None else _facts(sorted(by_defaults - set(result.heard)))
            print(
                f"| {name} | {result.wer:.1%} | {len(result.heard)} | {lacks} | "
                f"{_count(result.redecoded)} | {_count(result.dropped)} | {result.wall_s} | "
                f"{result.cpu_s} | {loads} |",
                flush=True,
            )
            if args.json:
                with args.json.open("a") as handle:
                    line = {"recording": material.name, "recipe": name, **asdict(result)}
                    handle.write(json.dumps(line) + "\n")
        if material.parts:
            print(f"\n| WER per part | {' | '.join(p.name for p in material.parts)} |")
            print(f"|---|{'---|' * len(material.parts)}")
            for name, (result, _) in figures.items():
                print(f"| {name} | {' | '.join(f'{w:.1%}' for w in result.parts.values())} |")
    return 0


def _facts(ids: list[str], *, shown: int = 6) -> str:
    """How many facts, and which (the first ``shown``)."""
    if not ids:
        return "0"
    more = f", +{len(ids) - shown}" if len(ids) > shown else ""
    return f"{len(ids)} ({', '.join(ids[:shown])}{more})"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


if __name__ == "__main__":
    raise SystemExit(main())
