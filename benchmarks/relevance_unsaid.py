"""Near-topic questions naming what a recording never says, as a signal (issue 36).

    python benchmarks/relevance_unsaid.py [--index-root DIR] [--cache DIR]

A near-topic question usually names a specific thing the recording never says
("warranty", "committee", "prison sentence") among topic words it does say. The shipped
``absent`` signal (:meth:`~llama_index_video.search.relevance.Vocabulary.absent`) is
the share of the question's words, weighted by rarity in the index, that no unit holds.
Variants of it (:data:`VARIANTS`) leave out the words a question about a conversation
uses to point at what was said ("summarize the discussion", "what did X think"), strip
common suffixes before comparing ("hiring" ~ "hire", "tested" ~ "test"), leave out
capitalised words (people named: speakers are rarely named in their own words), and
count a word as said when a word of the index is near it by the default embedding (its
nearest neighbour among the index's words).

Each is scored on the cached hits of the all-MiniLM-L6-v2 sets
(``benchmarks/relevance_signals/``, as ``benchmarks/relevance_fit.py`` reads them; no
index is built), with the seven meetings split into the tuning and the held-out meetings
of ``benchmarks/meetings.py`` (two sets):

- **as the confidence's ``absent`` signal**: the confidence and its conservative bars
  fitted as ``relevance_fit.py`` fits them, with the variant in place of ``absent``,
  leave-one-set-out (the held-out meetings scored by a fit that saw the tuning ones);
- **as a veto**: a question is also turned away when the variant reaches ``unsaid`` and
  its best hit's confidence (the shipped signals, held out) is under ``doubt``; the
  pair that turns away the most unanswerable questions of the fit sets while emptying
  at most 1 % of each one's answerable questions, chosen leave-one-set-out and on the
  tuning meetings alone;
- **the bound**: how many unanswerable questions any rule that turns away the less
  confident, more unsaid questions could turn away with no answer lost
  (:func:`dominated`), against the answers of every set and of the meetings alone.

Printed per set: answerable questions left empty, unanswerable ones turned away.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meetings import SETS as MEETING_SETS  # noqa: E402
from benchmarks.relevance_fit import (  # noqa: E402
    CHOSEN,
    EMPTY_AT_CUT,
    SIGNAL_SETS,
    Held,
    features,
    leave_one_out,
)
from benchmarks.relevance_sets import BENCHMARKS, SETS, Row, cached, set_key  # noqa: E402
from llama_index_video.search.policy import MINILM_IDENTITY  # noqa: E402
from llama_index_video.search.relevance import STOPWORDS, word_stem  # noqa: E402
from llama_index_video.store import tokens  # noqa: E402

# Words a question about a conversation uses to point at what was said, not at what it
# asks about: "summarize the discussion about ...", "what did the team think of ...".
_DISCOURSE_TEXT = """
summarize summarise summary discuss discussed discussing discussion discussions opinion
opinions think thinks thought thoughts view views conclusion conclusions conclude
concluded attitude attitudes advantage advantages disadvantage disadvantages benefit
benefits drawback drawbacks pros cons mention mentioned mentions talk talked talking
talks suggest suggested suggestion suggestions idea ideas decide decided decision
decisions agree agreed agreement propose proposed proposal explain explained
explanation describe described present presented presenting presentation point points
argue argued argument arguments concern concerns concerned concerning reason reasons
consider considered consideration considerations feel felt believe believed comment
comments response respond responded raise raised question questions issue issues detail
details regarding related according meeting meetings speaker speakers presenter narrator
host conversation conversations react reaction recommend recommended recommendation
recommendations
"""
DISCOURSE = frozenset(_DISCOURSE_TEXT.split())
SUFFIXES = ("ings", "ing", "ed", "es", "s", "e")
# A capitalised word after another word of the same sentence, with its "'s": a name.
_NAME = re.compile(r"(?<=[a-z0-9,;:'\u2019] )[A-Z][a-z]+(?:['\u2019]s)?")


def suffix_stem(token: str) -> str:
    """``token`` without its first matching suffix of :data:`SUFFIXES` (at least three
    letters kept), cut to the stem length of
    :func:`~llama_index_video.search.relevance.word_stem`."""
    for suffix in SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return word_stem(token[: -len(suffix)])
    return word_stem(token)


WordNear = Callable[[str, str], float]
"""The cosine, by the default embedding, of a word with the nearest word of one index
(``(word, index)``)."""


@dataclass(frozen=True)
class Variant:
    """How the question's words are compared with the index's."""

    discourse: bool = False
    """Leave out :data:`DISCOURSE` words."""
    suffixes: bool = False
    """Compare :func:`suffix_stem` stems instead of ``word_stem`` ones."""
    names: bool = False
    """Leave out capitalised words inside the sentence."""
    near: float | None = None
    """A word the index lacks counts as said when a word of the index is this close to
    it by the default embedding (its nearest neighbour among the index's words)."""

    @property
    def stem(self) -> Callable[[str], str]:
        return suffix_stem if self.suffixes else word_stem

    def asked(self, question: str) -> dict[str, str]:
        """The question's words compared (by stem, each with its first token)."""
        stop = STOPWORDS | tokens.english_stop_words() | (DISCOURSE if self.discourse else set())
        names = (
            {t for w in _NAME.findall(question) for t in tokens.words(w)} if self.names else set()
        )
        kept = [
            t
            for t in tokens.words(question)
            if t not in stop and t not in names and not (t.endswith("s") and t[:-1] in stop)
        ]
        asked: dict[str, str] = {}
        for token in kept:
            asked.setdefault(self.stem(token), token)
        return asked

    def unsaid(
        self, question: str, index: Mapping, *, name: str = "", near: WordNear | None = None
    ) -> float:
        """Share of the question's words, weighted by rarity in ``index`` (its cached
        vocabulary: ``units`` and each token's ``frequencies``), that no unit holds."""
        units = index["units"]
        stems: dict[str, int] = {}
        for token, count in index["frequencies"].items():
            stem = self.stem(token)
            stems[stem] = max(stems.get(stem, 0), count)
        asked = self.asked(question)
        if not asked or not units:
            return 0.0
        weight = {s: math.log((units + 1) / (stems.get(s, 0) + 0.5)) for s in asked}
        missing = [
            s
            for s, token in asked.items()
            if not stems.get(s) and not (self.near and near and near(token, name) >= self.near)
        ]
        return sum(weight[s] for s in missing) / sum(weight.values())


class Neighbours:
    """:data:`WordNear` by the default embedding, each word embedded once."""

    def __init__(self, indexes: Mapping[str, Mapping]) -> None:
        from llama_index_video.embeddings.local import local_embedding

        self.model = local_embedding()
        self.indexes = {name: sorted(index["frequencies"]) for name, index in indexes.items()}
        self.vectors: dict[str, np.ndarray] = {}
        self.matrices = {name: self.embed(words) for name, words in self.indexes.items()}

    def embed(self, words: Sequence[str]) -> np.ndarray:
        new = [w for w in dict.fromkeys(words) if w not in self.vectors]
        for start in range(0, len(new), 256):
            batch = new[start : start + 256]
            for word, vector in zip(batch, self.model.get_text_embedding_batch(batch), strict=True):
                found = np.asarray(vector, dtype=float)
                self.vectors[word] = found / np.linalg.norm(found)
        return np.array([self.vectors[w] for w in words]).reshape(len(words), -1)

    def __call__(self, word: str, index: str) -> float:
        matrix = self.matrices[index]
        return float((matrix @ self.embed([word])[0]).max()) if len(matrix) else 0.0


VARIANTS = {
    "shipped absent": None,
    "without discourse words": Variant(discourse=True),
    "+ suffixes stripped": Variant(discourse=True, suffixes=True),
    "+ names left out": Variant(discourse=True, suffixes=True, names=True),
    "+ a neighbour at cosine 0.8 counts as said": Variant(
        discourse=True, suffixes=True, names=True, near=0.8
    ),
    "+ a neighbour at cosine 0.7 counts as said": Variant(
        discourse=True, suffixes=True, names=True, near=0.7
    ),
    "+ a neighbour at cosine 0.6 counts as said": Variant(
        discourse=True, suffixes=True, names=True, near=0.6
    ),
    "+ a neighbour at cosine 0.5 counts as said": Variant(
        discourse=True, suffixes=True, names=True, near=0.5
    ),
}
TUNING, HELD_OUT = "meetings, tuning", "meetings, held out"


def minilm_sets(cache: Path, index_root: Path) -> tuple[dict[str, list[Row]], dict[str, dict]]:
    """The all-MiniLM-L6-v2 sets (the meetings split in two) and each index's cached
    vocabulary (by ``set/index``, :func:`index_key`)."""
    sets: dict[str, list[Row]] = {}
    words: dict[str, dict] = {}
    for spec in SETS:
        found = cached(spec, cache, index_root, refresh=False)
        if found.identity != MINILM_IDENTITY:
            continue
        stored = json.loads((cache / f"{set_key(spec.name)}.json").read_text())["vocabulary"]
        indexes = stored.get("indexes", {"": stored})
        parts = [(TUNING, "tuning"), (HELD_OUT, "held-out")] if spec.meetings else [(spec.name, "")]
        for name, meetings in parts:
            sets[name] = [
                r for r in found.rows if not meetings or r.index in MEETING_SETS[meetings]
            ]
            words |= {
                index_key(name, index): indexes[index] for index in {r.index for r in sets[name]}
            }
    return sets, words


def index_key(name: str, index: str) -> str:
    return f"{name}/{index}"


def with_unsaid(
    sets: dict[str, list[Row]],
    words: Mapping[str, Mapping],
    variant: Variant | None,
    near: WordNear | None,
) -> dict[str, list[Row]]:
    """``sets`` with each row's ``absent`` the variant's unsaid share."""
    if variant is None:
        return sets
    return {
        name: [
            replace(
                r,
                absent=variant.unsaid(
                    r.question.question,
                    words[index_key(name, r.index)],
                    name=index_key(name, r.index),
                    near=near,
                ),
            )
            for r in rows
        ]
        for name, rows in sets.items()
    }


@dataclass(frozen=True)
class Question:
    answerable: bool
    searched: bool
    """Search without a gate returned anything."""
    kept: bool
    """The shipped signals' confidence, held out, passed its cut."""
    best: float
    """The best hit's confidence (the shipped signals, held out)."""
    unsaid: float


def questions_of(rows: Sequence[Row], held: Held) -> list[Question]:
    """Each row with the shipped signals' held-out confidence and its ``absent`` (the
    variant's unsaid share)."""
    return [
        Question(
            r.question.answerable,
            bool(r.hits),
            bool(r.hits) and best >= held.gate.cut,
            best,
            r.absent,
        )
        for r, best in zip(rows, held.best, strict=True)
    ]


def empty_and_away(questions: Sequence[Question], kept: Sequence[bool]) -> tuple[int, int]:
    """Answerable questions left empty, unanswerable ones turned away."""
    pairs = list(zip(questions, kept, strict=True))
    return (
        sum(q.answerable and not (k and q.searched) for q, k in pairs),
        sum(not q.answerable and not k for q, k in pairs),
    )


def veto(questions: Sequence[Question], unsaid: float, doubt: float) -> list[bool]:
    return [q.kept and not (q.unsaid >= unsaid and q.best < doubt) for q in questions]


UNSAID_BARS = [x / 20 for x in range(2, 21)]
DOUBT_BARS = [x / 100 for x in range(5, 61)]


def chosen_veto(fit: Mapping[str, Sequence[Question]]) -> tuple[float, float]:
    """The (unsaid, doubt) pair that turns away the most unanswerable questions of the
    ``fit`` sets while leaving empty at most ``EMPTY_AT_CUT`` of each one's answerable
    questions beyond what the gate already empties; ties: the highest ``unsaid``, then
    the lowest ``doubt`` (the least the veto needs)."""
    best = (-1, 0.0, -1.0)
    for unsaid in UNSAID_BARS:
        for doubt in DOUBT_BARS:
            away, within = 0, True
            for questions in fit.values():
                before, _ = empty_and_away(questions, [q.kept for q in questions])
                empty, turned = empty_and_away(questions, veto(questions, unsaid, doubt))
                answerable = sum(q.answerable for q in questions)
                within = within and empty - before <= int(EMPTY_AT_CUT * answerable)
                away += turned
            if within and (away, unsaid, -doubt) > best:
                best = (away, unsaid, -doubt)
    return best[1], -best[2]


def dominated(question: Question, others: Sequence[Question]) -> bool:
    """Whether an answerable question the gate keeps has a confidence no higher and an
    unsaid share no lower: no rule that turns away less confident, more unsaid
    questions can turn this one away without emptying it."""
    return any(
        o.answerable and o.kept and o.best <= question.best and o.unsaid >= question.unsaid
        for o in others
    )


def cells(counts: Sequence[tuple[int, int]], totals: Sequence[tuple[int, int]]) -> str:
    return " | ".join(f"{e}/{a}, {t}/{u}" for (e, t), (a, u) in zip(counts, totals, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-root", type=Path, default=Path("/tmp/relevance-fit"))
    parser.add_argument("--cache", type=Path, default=BENCHMARKS / "relevance_signals")
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    sets, words = minilm_sets(args.cache, args.index_root)
    names = list(sets)
    totals = [
        (sum(r.question.answerable for r in rows), sum(not r.question.answerable for r in rows))
        for rows in sets.values()
    ]
    used = SIGNAL_SETS[CHOSEN]
    shipped = leave_one_out(sets, {n: features(r) for n, r in sets.items()}, used)
    started = time.process_time()
    near = Neighbours(words)
    print(f"{len(near.vectors)} index words embedded in {time.process_time() - started:.1f} CPU s")
    print("\nEach set: answerable empty, unanswerable turned away\n")
    print("| signal | way | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for label, variant in VARIANTS.items():
        varied = with_unsaid(sets, words, variant, near)
        held = leave_one_out(varied, {n: features(r) for n, r in varied.items()}, used)
        counts = [
            empty_and_away(
                questions_of(varied[n], shipped[n]),
                [
                    b >= held[n].gate.cut and bool(r.hits)
                    for b, r in zip(held[n].best, varied[n], strict=True)
                ],
            )
            for n in names
        ]
        print(f"| {label} | as `absent`, leave-one-set-out | {cells(counts, totals)} |")
        questions = {n: questions_of(varied[n], shipped[n]) for n in names}
        ways = {
            "veto, leave-one-set-out": {n: [o for o in names if o != n] for n in names},
            "veto chosen on the tuning meetings": {n: [TUNING] for n in names},
        }
        for way, fits in ways.items():
            counts, bars = [], []
            for n in names:
                unsaid, doubt = chosen_veto({o: questions[o] for o in fits[n]})
                bars.append(f"{unsaid:.2f}/{doubt:.2f}")
                counts.append(empty_and_away(questions[n], veto(questions[n], unsaid, doubt)))
            print(f"| | {way} | {cells(counts, totals)} |")
            print("| | its (unsaid, doubt) | " + " | ".join(bars) + " |")
        every = [q for n in names for q in questions[n]]
        meetings = questions[TUNING] + questions[HELD_OUT]
        free = [
            f"{sum(not q.answerable and q.kept and not dominated(q, pool) for q in questions[n])}"
            for n in names
            for pool in (every, meetings)
        ]
        print(
            "| | could be turned away with no answer lost, of all sets / of the meetings | "
            + " | ".join(f"{free[2 * i]} / {free[2 * i + 1]}" for i in range(len(names)))
            + " |"
        )
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
