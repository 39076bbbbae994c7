"""Languages in one recording of many: a new user's 11 min 24 s join of real speech (issue 36).

    python benchmarks/mixed_languages.py [--arrangements trial shuffled]
        [--seed 36] [--baseline-ref REF]

Material, **real speech** from this repository: the 13 AMI meeting excerpts and the phone
call of ``tests/fixtures/real_speech``, the LibriVox reading of ``tests/fixtures/speech``
(English), and the nine readings of ``tests/fixtures/real_languages`` (Arabic, German,
two Spanish, French, two Japanese, Portuguese, Mandarin). Two arrangements of them:

- ``trial``: the file of a new user's trial, rebuilt: the clips in that order, 5 s of
  silence between them (11 min 24 s). The rules of
  ``llama_index_video.transcription.speech_blocks`` (a block never runs on across a long
  pause) and ``language.PROBED_SHARE`` were chosen on it.
- ``shuffled``: the same clips in an order shuffled with a seed (``--seed``, 36 by
  default), and 1 to 4 s of silence between them (drawn with the same seed), so some
  changes of language come at pauses under the 2 s that end a block. Seed 36 was held
  out from the long-pause rule and the share; seed 37 was only used to score a rule
  tried after that (docs/evaluation.md).

Each clip is decoded with PyAV (``decode_audio``: 16 kHz mono), the clips joined with
numpy and written as a 16-bit WAV. Each version (this checkout; with ``--baseline-ref``,
that commit too) ingests it with its defaults in a child process (``llama-index-video
ingest``: ``tiny.en``, the language check and ``base`` for other languages, audio
transcribed 10 minutes at a time as ingest cuts it), then ``transcript --format json``
gives the stored units. Per clip: the languages its units carry (share of their
characters), whether their letters are in the clip's script (Latin; Arabic; Han with
kana for Japanese, without for Mandarin) and, for a Latin-script clip, whose stop words
the words are (:func:`words_language`). A clip is right when at least 80 % of its units'
characters carry its language, in its script, and a Latin-script clip's words are its
language's. Printed per version: the clips, how many are right, the ingest's wall and
CPU seconds, the load before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child imports the version it was given

from benchmarks.baseline import Version, load_average, release, run, today  # noqa: E402
from benchmarks.multilingual import write_wav  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
SAMPLE_RATE = 16_000
ENGLISH = [
    *(
        f"real_speech/ami_{name}.flac"
        for name in (
            *("dev00", "dev01", "es2004a", "trn00", "trn03", "trn04", "trn05", "trn06"),
            *("trn07", "trn08", "trn09", "tst00", "tst01"),
        )
    ),
    "speech/librivox_en.flac",
    "real_speech/phone_call_2f.flac",
]
OTHERS = [
    *("ar_speech_corpus", "de_fleurs", "es_fleurs", "es_mls", "fr_commonvoice"),
    *("ja_commonvoice", "ja_fleurs", "pt_fleurs", "zh_aishell1"),
]
TRIAL_GAP_S = 5.0
SHUFFLED_GAPS_S = (1.0, 4.0)
SEED = 36
RIGHT_SHARE = 0.8
"""A clip is right when at least this share of its units' characters carry its language."""
SCRIPT_SHARE = 0.8
"""... and at least this share of their letters are in its script."""
LATIN_LANGUAGES = ("en", "de", "es", "fr", "pt", "it", "nl")
"""The Latin-script languages a clip's words are weighed against (:func:`words_language`)."""


@dataclass(frozen=True)
class Clip:
    name: str
    language: str
    start: float
    end: float


@dataclass(frozen=True)
class Unit:
    start: float
    end: float
    text: str
    language: str | None


@dataclass(frozen=True)
class Verdict:
    """What the units of one clip carry."""

    languages: dict[str, float]  # language -> share of the units' characters
    script: float  # share of their letters in the clip's script
    words: str | None  # whose stop words they are (Latin-script clips), None: too few
    right: bool


def clips_in(arrangement: str, *, seed: int = SEED) -> list[tuple[Path, str, float]]:
    """``(audio, language, silence before it in seconds)`` for each clip, in order."""
    clips = [(FIXTURES / name, "en") for name in ENGLISH]
    for name in OTHERS:
        about = json.loads((FIXTURES / "real_languages" / f"{name}.json").read_text("utf-8"))
        clips.append((FIXTURES / "real_languages" / about["audio"], about["language"]))
    if arrangement == "trial":
        return [
            (path, code, 0.0 if i == 0 else TRIAL_GAP_S) for i, (path, code) in enumerate(clips)
        ]
    chance = random.Random(seed)
    chance.shuffle(clips)
    return [
        (path, code, 0.0 if i == 0 else round(chance.uniform(*SHUFFLED_GAPS_S), 2))
        for i, (path, code) in enumerate(clips)
    ]


def join(arrangement: str, into: Path, *, seed: int = SEED) -> list[Clip]:
    """Write ``arrangement``'s recording to ``into`` (16 kHz mono WAV); where each clip is."""
    from llama_index_video.media.audio import decode_audio

    parts: list[np.ndarray] = []
    clips: list[Clip] = []
    at = 0
    for path, language, gap in clips_in(arrangement, seed=seed):
        parts.append(np.zeros(round(gap * SAMPLE_RATE), np.float32))
        at += len(parts[-1])
        parts.append(decode_audio(path))
        clips.append(
            Clip(path.name, language, at / SAMPLE_RATE, (at + len(parts[-1])) / SAMPLE_RATE)
        )
        at += len(parts[-1])
    write_wav(into, np.clip(np.concatenate(parts), -1.0, 1.0) * 32767, SAMPLE_RATE)
    return clips


def units_of(clips: Sequence[Clip], units: Sequence[Unit]) -> list[list[Unit]]:
    """Each clip's units: those whose middle is nearer that clip than any other."""

    def distance(unit: Unit, clip: Clip) -> float:
        middle = (unit.start + unit.end) / 2
        return max(clip.start - middle, middle - clip.end, 0.0)

    found: list[list[Unit]] = [[] for _ in clips]
    for unit in units:
        found[min(range(len(clips)), key=lambda i: distance(unit, clips[i]))].append(unit)
    return found


def script_of(char: str) -> str | None:
    """The script of a letter: ``latin``, ``arabic``, ``han``, ``kana``, ``other``; None
    for what is not a letter."""
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    for script, marks in (
        ("latin", ("LATIN",)),
        ("arabic", ("ARABIC",)),
        ("han", ("CJK UNIFIED", "CJK COMPATIBILITY")),
        ("kana", ("HIRAGANA", "KATAKANA")),
    ):
        if name.startswith(marks):
            return script
    return "other"


def script_share(text: str, language: str) -> float:
    """The share of the letters of ``text`` in ``language``'s script (Japanese: Han and
    kana, with some kana; Mandarin: Han, no kana); 0.0 without letters."""
    scripts = Counter(s for s in map(script_of, text) if s is not None)
    letters = sum(scripts.values())
    if not letters:
        return 0.0
    if language == "ja":
        return (scripts["han"] + scripts["kana"]) / letters if scripts["kana"] else 0.0
    if language == "zh":
        return scripts["han"] / letters if not scripts["kana"] else 0.0
    return scripts["arabic" if language == "ar" else "latin"] / letters


def words_language(text: str, *, least: int = 2) -> str | None:
    """Of :data:`LATIN_LANGUAGES`, the one whose stop words ``text`` uses most (at least
    ``least`` of them), the way the chapter titles read them; None when none reaches it."""
    from llama_index_video.chapters.titles import stop_words
    from llama_index_video.store.tokens import words

    tokens = words(text)
    hits = {code: sum(t in stop_words(code) for t in tokens) for code in LATIN_LANGUAGES}
    best = max(hits, key=hits.__getitem__)
    return best if hits[best] >= least else None


def verdict(clip: Clip, units: Sequence[Unit]) -> Verdict:
    """How right the units of ``clip`` are (module docstring)."""
    characters: Counter[str] = Counter()
    for unit in units:
        characters[unit.language or "?"] += len(unit.text)
    total = sum(characters.values())
    shares = {code: round(n / total, 2) for code, n in characters.most_common()} if total else {}
    text = " ".join(unit.text for unit in units)
    script = script_share(text, clip.language)
    latin = clip.language not in ("ar", "ja", "zh")
    words = words_language(text) if latin else None
    right = (
        shares.get(clip.language, 0.0) >= RIGHT_SHARE
        and script >= SCRIPT_SHARE
        and (not latin or words == clip.language)
    )
    return Verdict(shares, round(script, 2), words, right)


def ingest(version: Version, audio: Path, work: Path) -> tuple[list[Unit], float, float]:
    """The units ``version``'s ingest stores for ``audio``; its wall and CPU seconds."""
    index = work / f"index-{version.source.name}"
    done = run(
        version.cli("ingest", str(audio), "--index", str(index), "--quiet"),
        version.env(),
        timeout=3600.0,
    )
    if done.returncode != 0:
        raise SystemExit(f"{version.name}: ingest failed:\n{done.stderr[-3000:]}")
    shown = run(
        version.cli("transcript", audio.name, "--format", "json", "--index", str(index)),
        version.env(),
    )
    if shown.returncode != 0:
        raise SystemExit(f"{version.name}: transcript failed:\n{shown.stderr[-3000:]}")
    units = [
        Unit(u["start"], u["end"], u["text"], u.get("language"))
        for u in json.loads(shown.stdout)["units"]
    ]
    return units, done.wall_s, done.cpu_s


def report(clips: Sequence[Clip], units: Sequence[Unit]) -> int:
    """Print one line per clip; the number of clips right."""
    print(f"  {'clip':24} {'spoken':>6} {'at':>13} {'units carry':26} {'script':>6} {'words':>5}")
    right = 0
    for clip, own in zip(clips, units_of(clips, units), strict=True):
        found = verdict(clip, own)
        right += found.right
        carried = " ".join(f"{code} {share:.0%}" for code, share in found.languages.items())
        print(
            f"  {clip.name:24} {clip.language:>6} {_clock(clip.start)}-{_clock(clip.end)}"
            f" {carried or 'nothing':26} {found.script:6.2f} {found.words or '-':>5}"
            f" {'right' if found.right else 'WRONG'}"
        )
    others = sum(1 for clip in clips if clip.language != "en")
    wrong_others = [
        clip.name
        for clip, own in zip(clips, units_of(clips, units), strict=True)
        if clip.language != "en" and not verdict(clip, own).right
    ]
    print(
        f"  {right} of {len(clips)} clips right; in other languages "
        f"{others - len(wrong_others)} of {others} (wrong: {', '.join(wrong_others) or 'none'})"
    )
    return right


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60):02d}:{seconds % 60:04.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--arrangements", nargs="+", choices=("trial", "shuffled"), default=["trial", "shuffled"]
    )
    parser.add_argument("--seed", type=int, default=SEED, help="of the shuffled arrangement")
    parser.add_argument("--baseline-ref", help="also ingest with the code of this git ref")
    args = parser.parse_args(argv)
    from benchmarks.ingest_speed import machine

    versions = [today(), *([release(args.baseline_ref)] if args.baseline_ref else [])]
    print(f"machine: {machine()}; real speech (fixtures), default ingest")
    with tempfile.TemporaryDirectory(prefix="mixed-languages-") as folder:
        for arrangement in args.arrangements:
            audio = Path(folder) / f"mixed_{arrangement}.wav"
            clips = join(arrangement, audio, seed=args.seed)
            named = f"shuffled, seed {args.seed}" if arrangement == "shuffled" else arrangement
            print(f"\n== {named}: {len(clips)} clips, {clips[-1].end:.1f} s")
            for version in versions:
                before = load_average()
                units, wall, cpu = ingest(version, audio, Path(folder))
                print(
                    f"- {version.name}: ingest {wall:.1f} s wall, {cpu:.1f} CPU s; "
                    f"load {before} / {load_average()}"
                )
                report(clips, units)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
