"""Which words annotators name meeting topics with: the table chapter titles lean on.

    python benchmarks/meeting_topic_words.py QMSUM_CHECKOUT

Chapters every meeting of a QMSum checkout's train split (162 meetings: AMI product
design, ICSI research, Welsh Parliament and Canadian committee meetings; MIT licence) as
at ingest, with the vectors flat as ``benchmarks/meetings.py --qmsum`` does, and counts
for each content word (:func:`llama_index_video.chapters.titles.content_words`) the
chapters that say it and, of those, the chapters whose annotated topic (the one it
overlaps most) holds it (:func:`benchmarks.meeting_scoring.content_words`). Words said in
fewer than :data:`MIN_CHAPTERS` chapters, and words no topic named, are left out (titles
give every word not in the table the same rate: the table's own). Writes
``llama_index_video/chapters/topic_words.tsv`` (word, chapters naming it, chapters saying
it; and a first line ``*`` with the totals over every word), which
:mod:`llama_index_video.chapters.titles` reads. Only the train split is read:
val and test stay held out for ``benchmarks/meetings.py --qmsum``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.meeting_scoring import content_words as topic_words  # noqa: E402
from benchmarks.meetings import load  # noqa: E402

MIN_CHAPTERS = 5
TABLE = ROOT / "llama_index_video" / "chapters" / "topic_words.tsv"


def counts(folder: Path) -> tuple[Counter[str], Counter[str]]:
    """For every content word of the meetings in ``folder``: the chapters that say it,
    and those of them whose annotated topic names it."""
    from llama_index_video.chapters.segment import TimedVector, chapter_starts
    from llama_index_video.chapters.titles import content_words

    said: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for path in sorted(folder.glob("*.json")):
        meeting = load(path.stem, path.parent)
        units = [TimedVector(t.start, t.end, (1.0,), t.text) for t in meeting.turns]
        starts = chapter_starts(units)
        for a, b in zip(starts, [*starts[1:], len(units)], strict=False):
            group = meeting.turns[a:b]
            topic = topic_words(meeting.topic_at(group[0].start, group[-1].end))
            for word in set(content_words(" ".join(t.text for t in group))):
                said[word] += 1
                named[word] += word in topic or word.removesuffix("s") in topic
    return said, named


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qmsum", type=Path, help="a checkout of github.com/Yale-LILY/QMSum")
    args = parser.parse_args(argv)
    said, named = counts(args.qmsum / "data" / "ALL" / "train")
    kept = sorted(w for w in said if said[w] >= MIN_CHAPTERS and named[w])
    lines = [f"{word}\t{named[word]}\t{said[word]}" for word in kept]
    total = f"*\t{sum(named.values())}\t{sum(said.values())}"
    TABLE.write_text("\n".join([total, *lines]) + "\n", encoding="utf-8")
    print(f"{len(kept)} words of {len(said)} -> {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
