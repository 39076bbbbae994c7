"""Chapter titles of real speech in other languages: how many of their words are function
words.

    python benchmarks/language_titles.py [--baseline-ref REF]

Material, **real speech, human transcripts** (no speech recognition): the forty FLEURS
readings of ``tests/fixtures/fleurs_languages`` (German, Spanish, French, Portuguese,
ten each), each language's ten readings titled as the ten chapters of one recording,
and the four readings of ``tests/fixtures/real_languages`` that come with a transcript
(German, two Spanish, Portuguese) as four chapters of one recording, each titled in its
language (:func:`~llama_index_video.chapters.titles.chapter_titles`). Each version (this
checkout, and ``--baseline-ref``, ``main`` by default) titles them in a child process.
Printed per version: every title, and how many of the title words are
:data:`FUNCTION_WORDS`: the function words (articles, pronouns, auxiliary and modal
verbs, prepositions, conjunctions, adverbs such as "ainsi") found by reading the titles
of both versions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child imports the version it was given

from benchmarks.baseline import load_average, measured_in, release, today  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
FUNCTION_WORDS = {
    "de": {"viele"},
    "es": {"cualquier", "además", "aparte"},
    "fr": {"être", "cependant", "autre", "après", "car", "chaque"},
    "pt": {"após", "através", "consequentemente"},
}
"""Per language, the title words judged function words by reading the titles."""


def recordings() -> list[tuple[str, list[str], list[str]]]:
    """``(name, chapter texts, chapter languages)`` of each recording titled."""
    fleurs = json.loads((FIXTURES / "fleurs_languages" / "clips.json").read_text("utf-8"))
    found = []
    for language in FUNCTION_WORDS:
        texts = [c["transcript"] for c in fleurs["clips"] if c["language"] == language]
        found.append((f"fleurs {language}", texts, [language] * len(texts)))
    readings = [
        json.loads(path.read_text("utf-8"))
        for path in sorted((FIXTURES / "real_languages").glob("*.json"))
    ]
    readings = [r for r in readings if r["transcript"] and r["language"] in FUNCTION_WORDS]
    found.append(
        ("real_languages", [r["transcript"] for r in readings], [r["language"] for r in readings])
    )
    return found


TITLING = """
import json
from llama_index_video.chapters.titles import chapter_titles
recordings = json.loads({recordings!r})
print(json.dumps([chapter_titles(texts, languages=codes) for _, texts, codes in recordings]))
"""


def function_words(title: str, language: str) -> list[str]:
    """The words of ``title`` that are :data:`FUNCTION_WORDS` of ``language``."""
    said = title.lower().replace(",", " ").split()
    return [word for word in said if word in FUNCTION_WORDS[language]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="main")
    args = parser.parse_args(argv)
    material = recordings()
    code = TITLING.format(recordings=json.dumps(material))
    print(f"load average before: {load_average()}")
    for version in (release(args.baseline_ref), today()):
        titled = measured_in(version, code)
        words = found = 0
        print(f"\n{version.name}")
        for (name, _, codes), titles in zip(material, titled, strict=True):
            print(f"  {name}")
            for title, language in zip(titles, codes, strict=True):
                hits = function_words(title, language)
                words += len(title.replace(",", " ").split())
                found += len(hits)
                print(f"    [{language}] {title}" + (f"   <- {', '.join(hits)}" if hits else ""))
        print(f"  title words that are function words: {found} of {words}")
    print(f"\nload average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
