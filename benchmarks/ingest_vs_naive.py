"""A whole ``llama-index-video ingest`` process beside the naive recipe, same run (issue 13).

    python benchmarks/ingest_vs_naive.py [--files a.mp4 b.mp3] [--rounds 3]
        [--baseline-ref REF] [--with-args ARGS ...] [--bytecode {warm,cold}] [--json FILE]

Each round runs, in alternating order, one child process per recipe on the same files:

- ``ours``: ``llama-index-video ingest FILES --index <fresh temp folder>`` with its
  defaults (transcript, frames, OCR, embeddings, Chroma), imports and model loading
  included;
- ``naive``: ``Naive`` of ``benchmarks/evaluate.py`` (faster-whisper tiny.en, beam 5, on
  the audio; all-MiniLM-L6-v2 on the raw segments, in an in-memory LlamaIndex index;
  nothing else), imports and model loading included;
- with ``--baseline-ref``, also ``ingest`` as that commit had it (exported by
  :mod:`benchmarks.baseline`), for a before/after in the same run;
- with ``--with-args "--language en"`` (repeatable), also today's ``ingest`` given those
  arguments (here: the spoken language said, so none is detected).

Reported per recipe: wall seconds (median over rounds), × real time (media seconds per
wall second), CPU seconds and peak RSS (the child's own, from ``wait4``), and the
median of the per-round ratios to the naive recipe. The machine is shared: the load
average at the start and end of the run is printed beside the figures.

Bytecode: ``pip install`` compiles every module it installs, so a user's process loads
``.pyc`` files; a virtualenv made with ``PYTHONDONTWRITEBYTECODE=1`` (as on the
development machines) has none, and each child would then compile every module it
imports, ours many more than the naive recipe's (``chromadb``, RapidOCR, OpenCV: about
5 CPU s against 2). So by default (``--bytecode warm``) children keep their bytecode
under ``benchmarks/.cache/pycache`` and each recipe runs once, untimed, on the first
file before the rounds; ``--bytecode cold`` times them compiling, as before.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import CACHE, ProcessRun, Version, load_average, release, run, today  # noqa: E402
from benchmarks.ingest_speed import DEFAULT_FILES, machine  # noqa: E402

NAIVE = "naive"
MAX_ROUNDS = 50
BYTECODE_CACHE = CACHE / "pycache"  # the same as benchmarks/cli_search.py's


@dataclass(frozen=True)
class Summary:
    """One recipe's figures over the rounds (medians)."""

    wall_s: float
    times_real_time: float
    cpu_s: float
    peak_rss_mb: float
    wall_vs_naive: float


def summarise(runs: Mapping[str, Sequence[ProcessRun]], media_seconds: float) -> dict[str, Summary]:
    """Medians per recipe; ``wall_vs_naive`` is the median of the per-round ratios.

    Raises:
        ValueError: no naive runs, or recipes with different numbers of rounds.
    """
    naive = runs.get(NAIVE)
    if not naive:
        raise ValueError(f"the {NAIVE!r} recipe has no runs to compare with")
    if any(len(done) != len(naive) for done in runs.values()):
        raise ValueError("every recipe needs one run per round")
    summaries = {}
    for name, done in runs.items():
        wall = statistics.median(r.wall_s for r in done)
        summaries[name] = Summary(
            wall_s=wall,
            times_real_time=media_seconds / wall,
            cpu_s=statistics.median(r.cpu_s for r in done),
            peak_rss_mb=max(r.peak_rss_mb for r in done),
            wall_vs_naive=statistics.median(
                r.wall_s / n.wall_s for r, n in zip(done, naive, strict=True)
            ),
        )
    return summaries


def naive_child(files: Sequence[Path]) -> None:
    """The naive recipe, run in this (child) process."""
    from benchmarks.evaluate import Naive

    Naive(files)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--rounds", type=int, default=3, help=f"rounds (1-{MAX_ROUNDS})")
    parser.add_argument("--baseline-ref", help="also time the ingest of this git ref")
    parser.add_argument(
        "--with-args",
        action="append",
        default=[],
        metavar="ARGS",
        help="also time today's ingest with these extra arguments (quoted, repeatable)",
    )
    parser.add_argument(
        "--bytecode",
        choices=("warm", "cold"),
        default="warm",
        help="children load compiled modules, as after pip install (warm, the default), "
        "or compile every module they import (cold)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--naive-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    files = [path.resolve() for path in args.files]
    if args.naive_child:
        naive_child(files)
        return 0
    if not 1 <= args.rounds <= MAX_ROUNDS:
        parser.error(f"--rounds must be within 1..{MAX_ROUNDS}")
    versions = {"ours": today()}
    extra = {"ours": [], **{f"ours {given}": given.split() for given in args.with_args}}
    versions.update({name: today() for name in extra})
    if args.baseline_ref:
        baseline = release(args.baseline_ref)
        versions[f"ours at {baseline.name.split()[-1].strip('()')}"] = baseline
    media_seconds = _media_seconds(files)
    print(f"machine: {machine()}; load average at start {load_average()}")
    print(f"files: {', '.join(f.name for f in files)} ({media_seconds:.0f} s of media)")
    print(f"bytecode: {args.bytecode}")
    names = [*versions, NAIVE]

    def recipe(name: str, files: Sequence[Path]) -> ProcessRun:
        if name == NAIVE:
            return _naive(files, args.bytecode)
        return _ingest(versions[name], files, args.bytecode, extra.get(name, []))

    if args.bytecode == "warm":
        for name in names:
            _succeeded(name, "the untimed first run", recipe(name, files[:1]))
    runs: dict[str, list[ProcessRun]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            runs[name].append(_succeeded(name, f"round {round_ + 1}", recipe(name, files)))
        shown = ", ".join(
            f"{name} {runs[name][-1].wall_s:.1f} s ({runs[name][-1].cpu_s:.1f} CPU s)"
            for name in names
        )
        print(f"round {round_ + 1}: {shown}", flush=True)
    summaries = summarise(runs, media_seconds)
    print(f"load average at end {load_average()}")
    print(
        f"{'recipe':16} {'wall s':>7} {'x real time':>12} {'CPU s':>6} {'peak MB':>8} "
        f"{'/ naive':>8}"
    )
    for name, s in summaries.items():
        print(
            f"{name:16} {s.wall_s:7.2f} {s.times_real_time:11.1f}x {s.cpu_s:6.1f} "
            f"{s.peak_rss_mb:8.0f} {s.wall_vs_naive:7.2f}x"
        )
    if args.json:
        figures = {
            "machine": machine(),
            "files": [f.name for f in files],
            "media_seconds": media_seconds,
            "rounds": args.rounds,
            "recipes": {name: asdict(s) for name, s in summaries.items()},
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def _succeeded(name: str, when: str, done: ProcessRun) -> ProcessRun:
    if done.returncode != 0:
        raise SystemExit(f"{name} failed in {when}:\n{done.stderr}")
    return done


def _ingest(
    version: Version, files: Sequence[Path], bytecode: str, extra: Sequence[str] = ()
) -> ProcessRun:
    with tempfile.TemporaryDirectory(prefix="ingest-vs-naive-") as folder:
        command = version.cli("ingest", *map(str, files), "--index", folder, "--quiet", *extra)
        return run(command, _env(version, bytecode))


def _naive(files: Sequence[Path], bytecode: str) -> ProcessRun:
    command = [sys.executable, str(Path(__file__).resolve()), "--naive-child", "--files"]
    return run([*command, *map(str, files)], _env(today(), bytecode))


def _env(version: Version, bytecode: str) -> dict[str, str]:
    """``version``'s child environment, with its bytecode kept (warm) or as it is (cold)."""
    env = version.env()
    if bytecode == "warm":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE_CACHE)
    return env


def _media_seconds(files: Sequence[Path]) -> float:
    from llama_index_video.media.probe import probe

    return sum(probe(path).duration for path in files)


if __name__ == "__main__":
    raise SystemExit(main())
