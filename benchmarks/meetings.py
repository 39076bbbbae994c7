"""Chapters on real meetings: boundaries and titles against annotators' topics (issue 36).

    python benchmarks/meetings.py [--set tuning|held-out|all] [--qmsum QMSUM_CHECKOUT]

The meetings (``benchmarks/meetings/``, see its ``SOURCE.json``) are QMSum's AMI,
ICSI and Welsh Parliament transcripts with the topics annotators marked as turn spans.
Here a meeting's transcript units are its turns, timed as read aloud at 2.6 words a
second (synthetic timing: no audio is made), labelled with the speaker's role as a
diarizer's label would be; they are embedded with the package's default local model,
as ingest embeds units, and chaptered by :func:`llama_index_video.chapters.segment.chapter_starts`
and :func:`~llama_index_video.chapters.titles.chapter_titles`, exactly as at ingest.

The extractive summary (:func:`llama_index_video.summaries.extractive.extractive_summary`)
is made from the same units and chapters: how many of its citations hold (point at a
unit that exists and overlaps the cited stretch), for how many of the annotators'
questions about a decision ("What did the group decide ...?") a decision line falls in
the stretch that answers it, and its wall-clock time. The annotators' questions are
searched by cosine over the turns: plain, chapters first, and, for those that name a
speaker's role or name (:func:`llama_index_video.search.speaker_named.named_speakers`
against the meeting's speaker tags), plain against that speaker's turns only.

Per meeting it prints boundary precision, recall and F1 at ±30 s and Pk against the
annotated topic starts, the same for the naive recipe (the meeting cut into as many
equal parts as annotators found topics: it is told the count), how many chapter titles
share a content word with the annotated topic they overlap most, and the CPU seconds
of chapters beside those of embedding the units (ingest also transcribes, so the share
of ingest is lower still). The tuning meetings chose the settings; the held-out ones
are reported apart.

With ``--qmsum`` it scores only chapter boundaries and titles, on every meeting of a
QMSum checkout: its train split (162 meetings) is where settings are chosen, its val
and test splits (70) are held out. The units' vectors are left flat there (see
:func:`qmsum_chapters`), so it measures the words' part of the segmentation. The
checkout is a clone of github.com/Yale-LILY/QMSum (its ``data/ALL/train``, ``val`` and
``test`` folders are all that is read). Titles are scored each way of
:mod:`benchmarks.meeting_titles` (the shipped one and those tried), with their length
and the share of their words no other title of the meeting has.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meeting_scoring import (  # noqa: E402
    Turn,
    boundary_f1,
    clean,
    overlaps,
    own_words,
    pk,
    title_matches,
    turn_times,
)
from benchmarks.meeting_titles import title_ways  # noqa: E402

MEETINGS = ROOT / "benchmarks" / "meetings"
DECIDED = re.compile(r"\b(?:decid\w*|decision\w*|agree\w*|conclu\w*)\b", re.IGNORECASE)
"""An annotators' question about a decision ("What did the group decide about ...?")."""
SETS = {
    "tuning": ("ES2002b", "TS3005c", "Bed004", "education_2"),
    "held-out": ("ES2004c", "Bed016", "education_13"),
}


@dataclass(frozen=True)
class Meeting:
    name: str
    turns: list[Turn]
    topics: list[tuple[str, float, float]]  # (topic, start, end) of each annotated span
    decided: list[list[tuple[float, float]]]  # the answer spans of each question on a decision
    asked: list[tuple[str, list[tuple[float, float]]]]  # every specific question, its spans

    @property
    def length(self) -> float:
        return self.turns[-1].end

    def topic_starts(self) -> list[float]:
        """Where an annotated topic begins after the first one (the true boundaries)."""
        firsts: dict[str, float] = {}
        for topic, start, _ in self.topics:
            firsts[topic] = min(start, firsts.get(topic, start))
        return sorted(s for s in set(firsts.values()) if s > self.turns[0].start)

    def topic_at(self, start: float, end: float) -> str:
        """The annotated topic overlapping ``[start, end]`` most ("" if none does)."""
        overlap: dict[str, float] = {}
        for topic, a, b in self.topics:
            shared = min(end, b) - max(start, a)
            if shared > 0:
                overlap[topic] = overlap.get(topic, 0.0) + shared
        return max(overlap, key=lambda t: overlap[t]) if overlap else ""


def load(name: str, folder: Path = MEETINGS) -> Meeting:
    data = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    turns = turn_times([(t["speaker"], clean(t["content"])) for t in data["meeting_transcripts"]])
    last = len(turns) - 1
    topics = [
        (entry["topic"], turns[int(a)].start, turns[min(int(b), last)].end)
        for entry in data["topic_list"]
        for a, b in entry["relevant_text_span"]
    ]
    decided = [
        [(turns[int(a)].start, turns[min(int(b), last)].end) for a, b in q["relevant_text_span"]]
        for q in data["specific_query_list"]
        if DECIDED.search(q["query"])
    ]
    asked = [
        (
            q["query"],
            [
                (turns[int(a)].start, turns[min(int(b), last)].end)
                for a, b in q["relevant_text_span"]
            ],
        )
        for q in data["specific_query_list"]
    ]
    return Meeting(name, turns, topics, decided, asked)


def topic_search(meeting: Meeting, vectors, starts: list[int], embed_model) -> dict:
    """For every annotated question, whether the first / one of the first three turns
    found overlaps an answer stretch: plain (turns by cosine) and by chapter (chapters,
    each the mean of its turns' vectors as at ingest, by cosine; the plain candidates then
    re-scored by :func:`~llama_index_video.search.by_chapter.chapter_blend`). Dense only,
    both arms."""
    from llama_index_video.search.by_chapter import CANDIDATES, CHAPTERS, chapter_blend
    from llama_index_video.search.speaker_named import named_speakers

    units = np.array(vectors, dtype=float)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    bounds = list(zip(starts, [*starts[1:], len(units)], strict=True))
    means = np.array([units[a:b].mean(axis=0) for a, b in bounds])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    chapter_of = {i: c for c, (a, b) in enumerate(bounds) for i in range(a, b)}
    plain, chaptered = [0, 0], [0, 0]
    roles = sorted({t.speaker for t in meeting.turns})
    by_speaker = [0, 0, 0, 0, 0]  # asked naming a speaker; plain first, top 3; filtered
    for question, spans in meeting.asked:
        query = np.array(embed_model.get_query_embedding(question), dtype=float)
        scores, chapter_scores = units @ query, means @ query
        ranked = [int(i) for i in np.argsort(-scores, kind="stable")]
        chapters = {
            int(c): float(chapter_scores[c])
            for c in np.argsort(-chapter_scores, kind="stable")[:CHAPTERS]
        }
        reordered = chapter_blend(
            ranked[: CANDIDATES * 3], scores.__getitem__, chapter_of.__getitem__, chapters
        )
        named = named_speakers(question, lambda: roles)
        theirs = [i for i in ranked if meeting.turns[i].speaker in named]
        arms = [(plain, ranked), (chaptered, reordered)]
        if named:
            by_speaker[0] += 1
            arms += [(by_speaker, ranked, 1), (by_speaker, theirs, 3)]
        for counts, order, *at in arms:
            hit = [overlaps(meeting.turns[i].start, meeting.turns[i].end, spans) for i in order]
            first = at[0] if at else 0
            counts[first] += bool(hit) and hit[0]
            counts[first + 1] += any(hit[:3])
    return {
        "asked": len(meeting.asked),
        "plain": plain,
        "by_chapter": chaptered,
        "by_speaker": by_speaker,
    }


def chapters_of(meeting: Meeting, embed_model) -> dict:
    from llama_index_video.chapters.segment import TimedVector, chapter_starts
    from llama_index_video.chapters.titles import chapter_titles
    from llama_index_video.results import Chapter
    from llama_index_video.store.library import TranscriptLine
    from llama_index_video.summaries.extractive import extractive_summary
    from llama_index_video.summaries.summary import citation_holds

    texts = [t.text or "." for t in meeting.turns]
    began = time.process_time()
    vectors = embed_model.get_text_embedding_batch(texts)
    embed_cpu = time.process_time() - began
    began = time.process_time()
    units = [
        TimedVector(t.start, t.end, v, t.text) for t, v in zip(meeting.turns, vectors, strict=True)
    ]
    starts = chapter_starts(units)
    groups = [meeting.turns[a:b] for a, b in zip(starts, [*starts[1:], len(units)], strict=True)]
    titles = chapter_titles([" ".join(t.text for t in group) for group in groups])
    chapter_cpu = time.process_time() - began
    searched = topic_search(meeting, vectors, starts, embed_model)
    began = time.perf_counter()
    summary = extractive_summary(
        f"{meeting.name}.wav",
        [TranscriptLine(t.start, t.end, t.text, t.speaker) for t in meeting.turns],
        [
            Chapter(meeting.name, g[0].start, g[-1].end, title, "", title, str(i))
            for i, (g, title) in enumerate(zip(groups, titles, strict=True))
        ],
    )
    summary_seconds = time.perf_counter() - began
    timed_lines = [TranscriptLine(t.start, t.end, t.text) for t in meeting.turns]
    cited = [line for section in summary.sections().values() for line in section]
    holding = sum(citation_holds(line, f"{meeting.name}.wav", timed_lines) for line in cited)
    found_decisions = [
        any(overlaps(d.start, d.end, spans) for d in summary.decisions) for spans in meeting.decided
    ]
    truth = meeting.topic_starts()
    found = [meeting.turns[i].start for i in starts[1:]]
    equal = [meeting.length * i / (len(truth) + 1) for i in range(1, len(truth) + 1)]
    matched = [
        title_matches(title, meeting.topic_at(group[0].start, group[-1].end))
        for title, group in zip(titles, groups, strict=True)
    ]
    return {
        "meeting": meeting.name,
        "minutes": round(meeting.length / 60, 1),
        "turns": len(meeting.turns),
        "topics": len(truth) + 1,
        "chapters": len(starts),
        "ours": (*boundary_f1(truth, found), pk(truth, found, length=meeting.length)),
        "equal_parts": (*boundary_f1(truth, equal), pk(truth, equal, length=meeting.length)),
        "titles_matching": sum(matched),
        "titles": titles,
        "embed_cpu": embed_cpu,
        "chapter_cpu": chapter_cpu,
        "summary_seconds": summary_seconds,
        "citations": (holding, len(cited)),
        "decisions": (sum(found_decisions), len(found_decisions), len(summary.decisions)),
        "search": searched,
    }


QMSUM_SPLITS = {"tuning": ("train",), "held-out": ("val", "test")}
"""With ``--qmsum``: the QMSum splits chapter settings are chosen on, and those held out."""


def qmsum_chapters(folder: Path, split: str) -> dict:
    """Boundaries and titles of every meeting of a QMSum checkout's ``split`` (its
    ``data/ALL/<split>/*.json``), chaptered as at ingest but with the vectors left flat
    (every unit the same vector: the blend's vector channel then moves no valley):
    embedding 130,000 turns takes hours on a busy 2-core machine. Titles are made each
    way of :func:`benchmarks.meeting_titles.title_ways`."""
    from llama_index_video.chapters.segment import TimedVector, chapter_starts

    scores = []
    chapters = found = true = 0
    titled: dict[str, list[int]] = {}  # way -> titles matching, words, own words (x100)
    for path in sorted((folder / "data" / "ALL" / split).glob("*.json")):
        meeting = load(path.stem, path.parent)
        units = [TimedVector(t.start, t.end, (1.0,), t.text) for t in meeting.turns]
        starts = chapter_starts(units)
        if not starts:
            continue
        bounds = [*starts[1:], len(units)]
        groups = [meeting.turns[a:b] for a, b in zip(starts, bounds, strict=True)]
        truth = meeting.topic_starts()
        at = [meeting.turns[i].start for i in starts[1:]]
        scores.append((boundary_f1(truth, at)[2], pk(truth, at, length=meeting.length)))
        topics = [meeting.topic_at(group[0].start, group[-1].end) for group in groups]
        ways = title_ways(groups)
        for way, made in ways.items():
            counts = titled.setdefault(way, [0, 0, 0])
            counts[0] += sum(title_matches(t, topic) for t, topic in zip(made, topics, strict=True))
            counts[1] += sum(len(t.replace(",", " ").split()) for t in made)
            counts[2] += round(100 * sum(own_words(made)))
        chapters, found, true = chapters + len(groups), found + len(at), true + len(truth)
    return {
        "meetings": len(scores),
        "f1": float(np.mean([f1 for f1, _ in scores])),
        "pk": float(np.mean([p for _, p in scores])),
        "titles": {
            way: (c[0], c[1] / chapters, c[2] / 100 / chapters) for way, c in titled.items()
        },
        "chapters": chapters,
        "boundaries": (found, true),
    }


def report(rows: list[dict], name: str) -> None:
    print(f"\n{name}: boundaries at ±30 s (P / R / F1, Pk lower is better)")
    print(
        f"{'meeting':13} {'min':>5} {'topics':>6} {'chap':>5}  {'ours':^24}  "
        f"{'equal parts (told the count)':^28}  titles  chapters CPU"
    )
    for r in rows:
        ours, equal = r["ours"], r["equal_parts"]
        print(
            f"{r['meeting']:13} {r['minutes']:5.1f} {r['topics']:6d} {r['chapters']:5d}  "
            f"{ours[0]:.2f} / {ours[1]:.2f} / {ours[2]:.2f}, {ours[3]:.2f}   "
            f"{equal[0]:.2f} / {equal[1]:.2f} / {equal[2]:.2f}, {equal[3]:.2f}      "
            f"{r['titles_matching']:2d}/{r['chapters']:<2d}  "
            f"{r['chapter_cpu'] * 1000:.0f} ms "
            f"({100 * r['chapter_cpu'] / r['embed_cpu']:.2f} % of embedding)"
        )
    mean = lambda key, i: float(np.mean([r[key][i] for r in rows]))  # noqa: E731
    titles = sum(r["titles_matching"] for r in rows) / sum(r["chapters"] for r in rows)
    print("  extractive summary: citations holding, questions on a decision whose answer")
    print("  stretch holds a decision line (decisions listed), seconds to summarize")
    for r in rows:
        held, cited = r["citations"]
        found, asked, listed = r["decisions"]
        print(
            f"  {r['meeting']:13} {held}/{cited} citations hold; decisions {found}/{asked} "
            f"({listed} listed); {r['summary_seconds']:.3f} s for {r['minutes']:.0f} min"
        )
    print("  questions: a turn of the answer stretch first / in the top 3 (dense, both arms)")
    totals = {"asked": 0, "plain": [0, 0], "by_chapter": [0, 0]}
    for r in rows:
        found = r["search"]
        totals["asked"] += found["asked"]
        for arm in ("plain", "by_chapter"):
            totals[arm] = [t + f for t, f in zip(totals[arm], found[arm], strict=True)]
        print(
            f"  {r['meeting']:13} {found['asked']:2d} asked: plain {found['plain'][0]} / "
            f"{found['plain'][1]}, by chapter {found['by_chapter'][0]} / {found['by_chapter'][1]}"
        )
    print(
        f"  {'all':13} {totals['asked']:2d} asked: plain {totals['plain'][0]} / "
        f"{totals['plain'][1]}, by chapter {totals['by_chapter'][0]} / {totals['by_chapter'][1]}"
    )
    named = np.sum([r["search"]["by_speaker"] for r in rows], axis=0)
    print(
        f"  questions naming a speaker's role or name: {named[0]}; first / top 3: plain "
        f"{named[1]} / {named[2]}, that speaker's turns only {named[3]} / {named[4]}"
    )
    print(
        f"{'mean':13} {'':5} {'':6} {'':5}  F1 {mean('ours', 2):.2f}, Pk {mean('ours', 3):.2f}"
        f"         F1 {mean('equal_parts', 2):.2f}, Pk {mean('equal_parts', 3):.2f}"
        f"            titles {titles:.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("tuning", "held-out", "all"), default="all")
    parser.add_argument("--titles", action="store_true", help="print every chapter title")
    parser.add_argument(
        "--qmsum",
        type=Path,
        help="a QMSum checkout (github.com/Yale-LILY/QMSum): chapter boundaries and titles "
        "of all its 232 meetings, vectors flat, instead of the seven here",
    )
    args = parser.parse_args(argv)
    if args.qmsum is not None:
        print(f"load average before: {load_average()}")
        for name, splits in QMSUM_SPLITS.items():
            for split in splits:
                r = qmsum_chapters(args.qmsum, split)
                print(
                    f"{name} ({split}): {r['meetings']} meetings, boundary F1 ±30 s "
                    f"{r['f1']:.3f}, Pk {r['pk']:.3f}, {r['boundaries'][0]} boundaries for "
                    f"{r['boundaries'][1]} annotated"
                )
                for way, (matching, words, own) in r["titles"].items():
                    print(
                        f"  titles {way}: sharing a content word with the topic {matching}/"
                        f"{r['chapters']} = {matching / r['chapters']:.3f}; {words:.1f} words, "
                        f"{own:.2f} of them in no other title of the meeting"
                    )
        print(f"load average after: {load_average()}")
        return 0
    from llama_index_video.embeddings.local import local_embedding

    embed_model = local_embedding()
    print(f"load average before: {load_average()}")
    for name in ("tuning", "held-out"):
        if args.set not in (name, "all"):
            continue
        rows = [chapters_of(load(meeting), embed_model) for meeting in SETS[name]]
        report(rows, name)
        if args.titles:
            for r in rows:
                print(f"  {r['meeting']}: " + " | ".join(r["titles"]))
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
