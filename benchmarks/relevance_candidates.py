"""Candidate signals for the confidence, each scored held out beside the shipped ones (issue 35).

    python benchmarks/relevance_candidates.py [--index-root DIR] [--cache DIR] [--embed E]

Each candidate is added to the shipped signals (:data:`~llama_index_video.search.
relevance.FEATURES`), and the confidence and its bars are fitted and scored exactly as
``benchmarks/relevance_fit.py`` does (leave-one-set-out, the conservative bars), on the
same cached hits of the all-MiniLM-L6-v2 sets (``--embed multilingual``: of the
multilingual-e5-small sets, text candidates only). Printed per set: answerable
questions returned empty / near-topic unanswerable ones turned away, and the sums. A candidate
ships only if it turns away more with no answer lost, held out.

The candidates:

- ``phrase``: the share of the question's pairs of consecutive content words that the
  hit holds as a pair too (its key noun phrase, "chess club", "payments table");
- ``agree``: the hit is both the one nearest in meaning (best cosine) and the one the
  exact words raised most (lexical and vector top-1 the same);
- ``typed``: the question asks for a colour, a weekday, a clock time, a version, or a
  length or duration ("how tall", "how long"), and the hit holds one (+1) or not (-1);
- ``absent_far``: the question's words absent from the index (as ``absent``), but only
  those with no word of the index one letter away (a mishearing would have one);
- ``question_words``: how many content words the question has;
- ``rank``: the hit's place in the fused ranking;
- ``standout`` and ``standout_all``: how far the best candidate's cosine stands out
  among its recording's best 50, and among the best 50 of the whole index (needs the
  index folders under ``--index-root``, as ``relevance_fit.py --refresh`` leaves them;
  skipped without them). Each costs a vector query per search.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.relevance_fit import features, leave_one_out  # noqa: E402
from benchmarks.relevance_sets import BENCHMARKS, SETS, Row, cached, set_key  # noqa: E402
from llama_index_video.search.relevance import (  # noqa: E402
    FEATURES,
    STEM_LENGTH,
    STOPWORDS,
    Vocabulary,
    standout,
)

TEXT_CANDIDATES = ("phrase", "agree", "typed", "absent_far", "question_words", "rank")
INDEX_CANDIDATES = ("standout", "standout_all")

_WORD = re.compile(r"[a-z0-9]+")
_COLOUR_TEXT = "red green blue yellow black white grey gray orange purple pink brown silver gold"
_COLOURS = frozenset(_COLOUR_TEXT.split())
_LENGTH_UNIT = (
    r"(m|km|cm|mm|metres?|meters?|kilometres?|kilometers?|feet|foot|miles?|kg|tons?|"
    r"minutes?|hours?|seconds?|days?|weeks?|months?|years?)\b"
)
_NUMBER = r"(\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|hundred)"
# What a question asks for, and what a hit that holds it holds.
_TYPES = (
    (r"\b(what|which) colou?r\b", None),
    (
        r"\b(which|what) (day|weekday)\b",
        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|tomorrow|today",
    ),
    (r"\bwhat time\b|\bhow (early|late)\b", r"\b\d{1,2}([:.]\d\d)?\b|noon|midnight|o'clock"),
    (r"\b(which|what)( \w+)? version\b", r"\d+\.\d+"),
    (r"\bhow (tall|high|far|long|thick|big|wide|deep|heavy)\b", rf"{_NUMBER}\s*{_LENGTH_UNIT}"),
)


def stems(text: str) -> list[str]:
    """The content words of ``text`` in order, stemmed, repeats kept (for pairs)."""
    return [w[:STEM_LENGTH] for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(words))


def phrase(question: str, text: str) -> float:
    """The share of the question's consecutive content-word pairs that ``text`` holds."""
    asked = pairs(stems(question))
    return len(asked & pairs(stems(text))) / len(asked) if asked else 0.0


def typed(question: str, text: str) -> float:
    """+1 when the question asks for a colour, weekday, clock time, version or length and
    ``text`` holds one, -1 when it holds none, 0 when the question asks for none of them."""
    asked = question.lower()
    for pattern, holds in _TYPES:
        if re.search(pattern, asked):
            if holds is None:
                found = any(w in _COLOURS for w in _WORD.findall(text.lower()))
            else:
                found = bool(re.search(holds, text.lower()))
            return 1.0 if found else -1.0
    return 0.0


def one_letter_apart(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter changed, added or removed."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return a == b
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def absent_far(question: str, vocabulary: Vocabulary) -> float:
    """:meth:`Vocabulary.absent` counting only words with no index word one letter away."""
    weight = vocabulary.asked(question)
    if not weight or not vocabulary.units:
        return 0.0
    far = sum(
        w
        for s, w in weight.items()
        if not vocabulary.stems.get(s)
        and not any(one_letter_apart(s, known) for known in vocabulary.stems)
    )
    return far / sum(weight.values())


def candidates(row: Row, vocabulary: Vocabulary, index: dict[str, float]) -> np.ndarray:
    """The :data:`TEXT_CANDIDATES` (and :data:`INDEX_CANDIDATES`, given ``index``) of
    each hit of ``row``, a hit per line."""
    question = row.question.question
    cosines = [h.score or 0.0 for h in row.hits]
    added = [max(0.0, (h.fused or c) - c) for h, c in zip(row.hits, cosines, strict=True)]
    nearest = int(np.argmax(cosines)) if cosines else -1
    raised = int(np.argmax(added)) if added and max(added) > 0 else -2
    far = absent_far(question, vocabulary)
    lines = []
    for i, hit in enumerate(row.hits):
        line = [
            phrase(question, hit.text),
            float(i == nearest == raised),
            typed(question, hit.text),
            far,
            float(len(stems(question))),
            float(i),
        ]
        lines.append(line + [index[name] for name in INDEX_CANDIDATES if name in index])
    return np.array(lines, dtype=float)


def index_signals(folder: Path, rows: list[Row]) -> dict[str, dict[str, float]]:
    """Each question's :data:`INDEX_CANDIDATES`, searched in the set's index folder."""
    from llama_index.core.schema import QueryBundle

    from llama_index_video.index import VideoIndex

    index = VideoIndex(folder, relevance=None)
    policy = index.search_policy()
    out = {}
    for row in rows:
        bundle = QueryBundle(row.question.question)
        bundle.embedding = policy.embed_model.get_query_embedding(bundle.query_str)
        whole = policy.vectors(top_k=50, visible=policy.visible).retrieve(bundle)
        out[row.question.id] = {
            "standout": standout(policy.recording_scores(bundle)),
            "standout_all": standout([h.score for h in whole if h.score is not None]),
        }
    index.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-root", type=Path, default=Path("/tmp/relevance-fit"))
    parser.add_argument("--cache", type=Path, default=BENCHMARKS / "relevance_signals")
    parser.add_argument("--embed", choices=("english", "multilingual"), default="english")
    args = parser.parse_args()
    found = {
        spec.name: cached(spec, args.cache, Path("/nonexistent"), refresh=False)
        for spec in SETS
        if spec.embed == args.embed
    }
    folders = {
        name: {
            asked_of: args.index_root / set_key(name) / asked_of / "index"
            for asked_of in {r.index for r in rows.rows}
        }
        for name, rows in found.items()
    }
    # the index folders' model is the default one; every set's must be there
    with_index = args.embed == "english" and all(
        folder.exists() for by_index in folders.values() for folder in by_index.values()
    )
    sets: dict[str, list[Row]] = {}
    feats: dict[str, list[np.ndarray]] = {}
    for name, one in found.items():
        by_question = {}
        for asked_of, folder in folders[name].items() if with_index else ():
            by_question |= index_signals(folder, [r for r in one.rows if r.index == asked_of])
        sets[name] = one.rows
        feats[name] = [
            np.column_stack(
                [f, candidates(r, one.vocabularies[r.index], by_question.get(r.question.id, {}))]
            )
            if len(f)
            else np.zeros((0, len(FEATURES) + len(TEXT_CANDIDATES) + len(INDEX_CANDIDATES)))
            for r, f in zip(one.rows, features(one.rows), strict=True)
        ]
    names = (*FEATURES, *TEXT_CANDIDATES, *(INDEX_CANDIDATES if with_index else ()))
    tried = {"shipped": FEATURES} | {f"+ {c}": (*FEATURES, c) for c in names[len(FEATURES) :]}
    tried["+ all"] = names
    print("| signals | " + " | ".join(sets) + " | all sets |")
    print("|---|" + "---|" * (len(sets) + 1))
    for label, used in tried.items():
        held = leave_one_out(sets, feats, used, names)
        cells = [f"{h.at_cut.empty:.2f} / {h.at_cut.turned_away:.2f}" for h in held.values()]
        empty = sum(round(h.at_cut.empty * h.at_cut.answerable) for h in held.values())
        away = sum(round(h.at_cut.turned_away * h.at_cut.unanswerable) for h in held.values())
        total = sum(h.at_cut.unanswerable for h in held.values())
        print(f"| {label} | " + " | ".join(cells) + f" | {empty} empty, {away}/{total} away |")
    if not with_index:
        why = (
            "English sets only"
            if args.embed != "english"
            else f"no index folders under {args.index_root}"
        )
        print(f"\n({', '.join(INDEX_CANDIDATES)} skipped: {why})")


if __name__ == "__main__":
    main()
