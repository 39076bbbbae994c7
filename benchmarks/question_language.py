"""Which language a question is read in, for "not found" in the question's language.

Run from the repository root::

    python benchmarks/question_language.py [--json FILE]

The questions are the multilingual sets' own, written before the detector
(``llama_index_video/answering/not_found.py``) and never used to tune it: every question
of ``benchmarks/multilingual.json`` (synthetic and real recordings) and of
``benchmarks/questions_users_multilingual.json`` (near-topic questions), each in the
recording's language ("native") and in English ("english"). A question in a language the
not-found tables hold should be read in it; one in another language (Arabic here)
should fall back to English. The baseline, printed beside, is the old behaviour: every
question answered in English.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llama_index_video.answering.not_found import NOT_FOUND_ANSWERS, question_language  # noqa: E402

SETS = (
    ROOT / "benchmarks" / "multilingual.json",
    ROOT / "benchmarks" / "questions_users_multilingual.json",
)


@dataclass(frozen=True)
class Score:
    """How many questions of each language were read in the language expected."""

    right: dict[str, int]
    total: dict[str, int]
    misses: list[tuple[str, str, str]]  # (expected, read, question)

    @property
    def accuracy(self) -> float:
        return sum(self.right.values()) / max(1, sum(self.total.values()))


def expected(language: str) -> str:
    """The language "not found" should be said in: the question's, else English."""
    return language if language in NOT_FOUND_ANSWERS else "en"


def score(questions: Iterable[tuple[str, str]], read: Callable[[str], str]) -> Score:
    """``read`` (question -> language) scored on ``(language, question)`` pairs."""
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    for language, question in questions:
        wanted = expected(language)
        total[language] += 1
        got = read(question)
        if got == wanted:
            right[language] += 1
        else:
            misses.append((wanted, got, question))
    return Score(dict(right), dict(total), misses)


def questions() -> list[tuple[str, str]]:
    """Every ``(language, question)`` of the sets, native and English."""
    retrieval = json.loads(SETS[0].read_text())
    recordings = [*retrieval["recordings"], *retrieval["real"]]
    language_of = {r["file"]: r["language"] for r in recordings}
    asked = [(r["language"], q) for r in recordings for q in r["questions"]]
    near = json.loads(SETS[1].read_text())["questions"]
    asked += [(language_of[q["near"]], q) for q in near]
    pairs = [(language, q["native"]) for language, q in asked]
    return pairs + [("en", q["english"]) for _, q in asked if q.get("english")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    asked = questions()
    found = score(asked, question_language)
    baseline = score(asked, lambda _question: "en")
    print(f"{len(asked)} questions; read in the right language (baseline: always English)")
    for language in sorted(found.total):
        total = found.total[language]
        print(
            f"  {language}: {found.right.get(language, 0)}/{total}"
            f"  (baseline {baseline.right.get(language, 0)}/{total})"
        )
    print(f"  all: {found.accuracy:.3f}  (baseline {baseline.accuracy:.3f})")
    for wanted, got, question in found.misses:
        print(f"  missed: {wanted} read as {got}: {question}")
    if args.json:
        args.json.write_text(
            json.dumps({"found": asdict(found), "baseline": asdict(baseline)}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
