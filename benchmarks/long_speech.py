"""Long recordings through real speech recognition: ours beside the naive recipe (issue 22).

    python benchmarks/long_speech.py [--minutes 20 60 120] [--cache DIR] [--baseline-ref REF]
        [--language en] [--json FILE] [--hits FILE] [--keep-index DIR]

For each length, a recording planned by :mod:`benchmarks.long_speech_script` (several
espeak-ng voices reading varied prose, ``FACTS`` said at known times with near-topic
distractors elsewhere, long silences, music, music and noise beds: synthetic speech) is
written once to the cache (outside the repository: ``~/.cache/llama-index-video/
long_speech`` by default) and then, each in a child process timed as a whole (wall,
CPU seconds, peak RSS):

- ``ours``: ``llama-index-video ingest`` with its defaults into a fresh index, then
  every question through ``VideoIndex.search`` (defaults: top 5, threshold, gate);
- ``naive``: ``Naive`` of ``benchmarks/evaluate.py`` (faster-whisper tiny.en segments,
  all-MiniLM-L6-v2 cosine, top 5), which searches in the same child; its ingest wall
  time is measured inside the child;
- with ``--baseline-ref``, ``ours`` as that commit had it.

Both hear the audio through tiny.en (no subtitles). Scored per recipe
(:func:`score`): R@1 and R@3 (a hit overlapping the fact's span), the answer in the
top-3 hits' text and context, answerable questions that came back empty, unanswerable
questions turned away (nothing returned), and the seek error (the start of the first
top-3 hit overlapping the fact minus the fact's start): median and 95th percentile of
its absolute value. The machine is shared: the load average is printed with every figure.

``--language`` tells ours' ingest the spoken language (else it detects it, as a user's
ingest does); ``--hits`` writes every question's hits, to read what each recipe found;
``--keep-index`` keeps ours' index folders, and searches one kept before without
ingesting again (to measure a search-side change; its ingest figures are then blank).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import ProcessRun, Version, load_average, release, run, today  # noqa: E402
from benchmarks.long_speech_script import (  # noqa: E402
    FACTS,
    UNANSWERABLE,
    digest,
    iter_facts,
    plan,
    synthesise,
)
from benchmarks.scoring import Question, RankedHit, answer_in_context, first_hit_rank  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "llama-index-video" / "long_speech"
NAME = "long_speech_{minutes}min.wav"
TOP_K = 5


@dataclass(frozen=True)
class Figures:
    """One recipe's retrieval figures on one recording."""

    answerable: int
    r_at_1: float
    r_at_3: float
    answer_at_3: float
    empty: int
    unanswerable: int
    turned_away: float
    seek_median_s: float | None
    seek_p95_s: float | None
    seek_signed_median_s: float | None
    lowest_found_score: float | None = None
    highest_unanswerable_score: float | None = None


def questions(timeline: dict[str, tuple[float, float]], file: str) -> list[Question]:
    """The facts said in the recording (with their times), then the unanswerable ones."""
    asked = [
        Question(f.id, "spoken", f.question, file=file, start=start, end=end, answer=f.answer)
        for f, start, end in iter_facts(timeline)
    ]
    return asked + [Question(f"none_{i}", "none", q) for i, q in enumerate(UNANSWERABLE)]


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def seek_error(question: Question, hits: Sequence[RankedHit], *, depth: int = 3) -> float | None:
    """The first top-``depth`` hit overlapping the fact: its start minus the fact's start."""
    rank = first_hit_rank(question, hits[:depth])
    if rank is None or question.start is None:
        return None
    start = hits[rank - 1].start
    return None if start is None else start - question.start


def score(
    results: Sequence[tuple[Question, Sequence[RankedHit]]],
    scores: dict[str, list[float]] | None = None,
) -> Figures:
    """The figures of ``results``; with each question's hit ``scores`` (by question id),
    also the lowest score of a top-3 hit on its fact and the highest top score of an
    unanswerable question: where a similarity threshold could go."""
    answerable = [(q, h) for q, h in results if q.answerable]
    unanswerable = [(q, h) for q, h in results if not q.answerable]
    ranks = [first_hit_rank(q, h) for q, h in answerable]
    errors = [e for e in (seek_error(q, h) for q, h in answerable) if e is not None]
    count = max(1, len(answerable))
    return Figures(
        answerable=len(answerable),
        r_at_1=sum(r == 1 for r in ranks) / count,
        r_at_3=sum(r is not None and r <= 3 for r in ranks) / count,
        answer_at_3=sum(answer_in_context(q, h) for q, h in answerable) / count,
        empty=sum(not h for _, h in answerable),
        unanswerable=len(unanswerable),
        turned_away=sum(not h for _, h in unanswerable) / max(1, len(unanswerable)),
        seek_median_s=statistics.median(abs(e) for e in errors) if errors else None,
        seek_p95_s=percentile([abs(e) for e in errors], 0.95) if errors else None,
        seek_signed_median_s=statistics.median(errors) if errors else None,
        **(_margins(results, scores) if scores is not None else {}),
    )


def _margins(
    results: Sequence[tuple[Question, Sequence[RankedHit]]], scores: dict[str, list[float]]
) -> dict[str, float | None]:
    found = [
        scores[q.id][rank - 1]
        for q, hits in results
        if q.answerable and (rank := first_hit_rank(q, hits[:3])) is not None
    ]
    turned = [scores[q.id][0] for q, hits in results if not q.answerable and hits]
    return {
        "lowest_found_score": min(found) if found else None,
        "highest_unanswerable_score": max(turned) if turned else None,
    }


def recording(minutes: float, cache: Path) -> tuple[Path, dict[str, tuple[float, float]], float]:
    """The recording of ``minutes`` (synthesised once into ``cache``), its facts, its length."""
    items = plan(minutes)
    folder = cache / digest(items)
    path = folder / NAME.format(minutes=f"{minutes:g}")
    if not path.with_suffix(".json").is_file() or not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        synthesise(items, path)
    saved = json.loads(path.with_suffix(".json").read_text())
    facts = {k: (float(v[0]), float(v[1])) for k, v in saved["facts"].items()}
    return path, facts, float(saved["seconds"])


def _ours_child(index: Path, asked: Path, out: Path) -> None:
    """Search every question in ``index`` (run in the version's child process)."""
    from llama_index_video.index import VideoIndex

    found = {}
    opened = VideoIndex(index)
    try:
        for q in json.loads(asked.read_text()):
            hits = opened.search(q["question"], top_k=TOP_K)
            found[q["id"]] = [_hit(h.to_dict()) for h in hits]
    finally:
        opened.close()
    out.write_text(json.dumps(found))


def _hit(data: dict) -> dict:
    context = " ".join(c.get("text") or "" for c in data.get("context") or [])
    return {
        "file": Path(data["source"]).name,
        "start": data.get("start"),
        "end": data.get("end"),
        "text": f"{data.get('text') or ''} {context}",
        "score": data.get("score"),
    }


def _naive_child(audio: Path, asked: Path, out: Path) -> None:
    from benchmarks.evaluate import Naive

    naive = Naive([audio])
    found = {}
    for q in json.loads(asked.read_text()):
        hits = naive.search(Question(q["id"], "spoken", q["question"]))
        found[q["id"]] = [{**asdict(h), "score": None} for h in hits]
    out.write_text(json.dumps({"ingest_s": naive.seconds, "hits": found}))


def _ran(name: str, done: ProcessRun) -> ProcessRun:
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
    return done


def measure(
    version: Version | None,
    audio: Path,
    asked: list[Question],
    seconds: float,
    work: Path,
    *,
    index: Path | None = None,
    ingest_args: Sequence[str] = (),
) -> tuple[Figures, dict, dict[str, list[dict]]]:
    """One recipe on one recording: ``version``'s ingest and search, or the naive one;
    its figures, its process figures and every question's hits.

    ``index``: ours' index folder; one that exists is searched without ingesting again
    (the process figures are then those of no ingest: left out); ``ingest_args``: more
    options of ours' ``ingest``."""
    listed = work / "questions.json"
    listed.write_text(json.dumps([{"id": q.id, "question": q.question} for q in asked]))
    out = work / "hits.json"
    timeout = max(900.0, 6 * seconds)
    me = [sys.executable, str(Path(__file__).resolve())]
    load = load_average()
    if version is None:
        env = today().env()
        done = _ran(
            "naive",
            run([*me, "--naive-child", str(audio), str(listed), str(out)], env, timeout=timeout),
        )
        data = json.loads(out.read_text())
        ingest_s, found = data["ingest_s"], data["hits"]
        ingest = done
    else:
        reused = index is not None and index.is_dir()
        index = index or work / "index"
        if reused:
            ingest = ProcessRun(math.nan, math.nan, math.nan, 0, "", "")
            ingest_s = math.nan
        else:
            command = version.cli(
                "ingest", str(audio), "--index", str(index), "--quiet", *ingest_args
            )
            ingest = _ran("ingest", run(command, version.env(), timeout=timeout))
            ingest_s = ingest.wall_s
        searched = [*me, "--ours-child", str(index), str(listed), str(out)]
        _ran("search", run(searched, version.env(), timeout=timeout))
        found = json.loads(out.read_text())
    results = [(q, [RankedHit(**_ranked(h)) for h in found[q.id]]) for q in asked]
    scores = {q.id: [h.get("score") for h in found[q.id]] for q in asked}
    known = all(s is not None for listed in scores.values() for s in listed)
    process = {
        "ingest_wall_s": round(ingest_s, 1),
        "x_real_time": round(seconds / ingest_s, 1),
        "cpu_s": round(ingest.cpu_s, 1),
        "peak_rss_mb": round(ingest.peak_rss_mb, 0),
        "load_before": load,
        "load_after": load_average(),
    }
    return score(results, scores if known else None), process, found


def _ranked(hit: dict) -> dict:
    return {k: v for k, v in hit.items() if k != "score"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", nargs="+", type=float, default=[20.0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--baseline-ref", help="also run ours as this git ref had it")
    parser.add_argument("--no-naive", action="store_true")
    parser.add_argument("--no-ours", action="store_true", help="only the naive recipe")
    parser.add_argument(
        "--language", help="ours' ingest is told the spoken language (default: it detects it)"
    )
    parser.add_argument("--json", type=Path, help="append the figures here (JSON lines)")
    parser.add_argument(
        "--hits", type=Path, help="append every question's hits here (JSON lines), to read"
    )
    parser.add_argument(
        "--keep-index",
        type=Path,
        help="keep ours' index folders here; one kept before is searched without ingesting",
    )
    parser.add_argument("--naive-child", nargs=3, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--ours-child", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.naive_child:
        _naive_child(*args.naive_child)
        return 0
    if args.ours_child:
        _ours_child(*args.ours_child)
        return 0
    recipes: dict[str, Version | None] = {} if args.no_ours else {"ours": today()}
    if args.baseline_ref:
        recipes[f"ours at {args.baseline_ref}"] = release(args.baseline_ref)
    if not args.no_naive:
        recipes["naive"] = None
    print("All speech is synthetic (espeak-ng voices), heard through faster-whisper tiny.en.")
    for minutes in args.minutes:
        audio, facts, seconds = recording(minutes, args.cache)
        asked = questions(facts, audio.name)
        print(
            f"\n## {minutes:g} min ({seconds:.0f} s): {len(facts)}/{len(FACTS)} facts, "
            f"{len(UNANSWERABLE)} unanswerable; load average {load_average()}",
            flush=True,
        )
        print(
            "| recipe | R@1 | R@3 | answer in top-3 | empty | turned away | seek median / p95 "
            "(signed median) | ingest × real time | CPU s | peak RSS MB | load before / after |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, version in recipes.items():
            kept = (
                args.keep_index / f"{minutes:g}min-{name.replace(' ', '_')}"
                if args.keep_index and version is not None
                else None
            )
            with tempfile.TemporaryDirectory(prefix="long-speech-") as folder:
                figures, process, found = measure(
                    version,
                    audio,
                    asked,
                    seconds,
                    Path(folder),
                    index=kept,
                    ingest_args=("--language", args.language) if args.language else (),
                )
            seek = (
                f"{figures.seek_median_s:.2f} / {figures.seek_p95_s:.2f} s "
                f"({figures.seek_signed_median_s:+.2f})"
                if figures.seek_median_s is not None
                and figures.seek_p95_s is not None
                and figures.seek_signed_median_s is not None
                else "-"
            )
            print(
                f"| {name} | {figures.r_at_1:.2f} | {figures.r_at_3:.2f} | "
                f"{figures.answer_at_3:.2f} | {figures.empty}/{figures.answerable} | "
                f"{figures.turned_away:.2f} | {seek} | {process['x_real_time']}× | "
                f"{process['cpu_s']} | {process['peak_rss_mb']} | "
                f"{process['load_before']} / {process['load_after']} |",
                flush=True,
            )
            if figures.lowest_found_score is not None:
                print(
                    f"  {name}: lowest score of a found fact {figures.lowest_found_score}, "
                    f"highest top score of an unanswerable {figures.highest_unanswerable_score}"
                )
            if args.hits:
                with args.hits.open("a") as handle:
                    for q in asked:
                        line = {"minutes": minutes, "recipe": name, **asdict(q)}
                        handle.write(json.dumps({**line, "hits": found[q.id]}) + "\n")
            if args.json:
                with args.json.open("a") as handle:
                    line = {"minutes": minutes, "recipe": name, **asdict(figures), **process}
                    handle.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
