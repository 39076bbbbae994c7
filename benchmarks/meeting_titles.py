"""Ways of titling chapters tried against the shipped titler (``meetings.py --qmsum``).

Each way is the shipped titler's phrase scores
(:func:`~llama_index_video.chapters.titles.phrase_scores`) with some settings changed
or some phrases weighed up, picked for the recording as the titler picks
(:func:`~llama_index_video.chapters.titles.pick_phrases`):

- before: the topic-word weight 3 and no limit on how many titles a word names (the
  titler until the two-titles rule);
- weight 20: the rule, and a heavier lean on the topic-word table;
- no topic-word table: the rule, and the phrases' own weights (weight 0), what a
  meeting whose words the table lacks gets;
- from the settings before, a phrase weighed up when one of its words is said in the
  chapter's first minute (the chair introduces a topic: "let's talk about the budget"),
  in a noun phrase (after a determiner: "the budget", a chunker without parts of
  speech), in the five turns nearest the chapter's centroid (TF-IDF of their content
  words), or just after an agenda cue ("moving on to", "the next item is").

None of these is in the package: the module docstring of ``chapters/titles.py`` and
docs/evaluation.md say which won.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from benchmarks.meeting_scoring import Turn

FIRST_SECONDS = 60.0
CENTRAL_TURNS = 5
AFTER_CUE_WORDS = 6
_DETERMINER_TEXT = "the a an our your my their his her its this that these those"
DETERMINERS = frozenset(_DETERMINER_TEXT.split())
AGENDA_CUE = re.compile(
    r"\b(?:let'?s (?:talk|discuss|move on|go on|turn|start|begin|look)(?: about| at| on| to)?"
    r"|mov(?:e|ing) on(?: to)?|(?:the )?next (?:item|thing|topic|point|question)(?: is| on)?"
    r"|turn(?:ing)? to|talk(?:ing)? about|agenda(?: is)?)\b",
    re.IGNORECASE,
)


@contextmanager
def titler_settings(**values: float) -> Iterator[None]:
    """The titler's module settings (``TOPIC_WORD_WEIGHT=3``...) changed for a block."""
    from llama_index_video.chapters import titles

    before = {name: getattr(titles, name) for name in values}
    for name, value in values.items():
        setattr(titles, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(titles, name, value)


def noun_words(text: str) -> set[str]:
    """Content words of ``text`` inside a noun phrase as a chunker without parts of speech
    finds one: the content words right after a determiner ("the remote control")."""
    from llama_index_video.chapters.titles import terms
    from llama_index_video.store.tokens import words

    found: set[str] = set()
    inside = False
    for token, term in zip(words(text), terms(text), strict=True):
        if token in DETERMINERS:
            inside = True
        elif inside and term is not None:
            found.add(term)
        else:
            inside = False
    return found


def central_words(turns: Sequence[Turn], idf: dict[str, float]) -> set[str]:
    """Content words of the :data:`CENTRAL_TURNS` turns nearest the chapter's centroid
    (cosine over their content words' TF-IDF)."""
    from llama_index_video.chapters.titles import content_words

    counts = [Counter(content_words(turn.text)) for turn in turns]
    vocabulary = {w: i for i, w in enumerate(sorted({w for c in counts for w in c}))}
    if not vocabulary:
        return set()
    matrix = np.zeros((len(turns), len(vocabulary)))
    for row, said in enumerate(counts):
        for word, n in said.items():
            matrix[row, vocabulary[word]] = n * idf.get(word, 1.0)
    norms = np.linalg.norm(matrix, axis=1)
    matrix[norms > 0] /= norms[norms > 0, None]
    nearest = np.argsort(-(matrix @ matrix.mean(axis=0)), kind="stable")[:CENTRAL_TURNS]
    return {word for row in nearest for word in counts[row]}


def cued_words(text: str) -> set[str]:
    """Content words among the :data:`AFTER_CUE_WORDS` words after each agenda cue."""
    from llama_index_video.chapters.titles import terms

    found: set[str] = set()
    for cue in AGENDA_CUE.finditer(text):
        found |= {t for t in terms(text[cue.end() :])[:AFTER_CUE_WORDS] if t is not None}
    return found


def first_words(turns: Sequence[Turn]) -> set[str]:
    """Content words of the turns that start in the chapter's first :data:`FIRST_SECONDS`."""
    from llama_index_video.chapters.titles import content_words

    opening = [t.text for t in turns if t.start < turns[0].start + FIRST_SECONDS]
    return set(content_words(" ".join(opening)))


def weighed_up(
    scores: list[dict[str, float]], favoured: Sequence[set[str]], factor: float
) -> list[dict[str, float]]:
    """``scores`` with each phrase holding a word of its chapter's ``favoured`` set times
    ``factor``."""
    return [
        {p: s * (factor if set(p.split()) & words else 1.0) for p, s in chapter.items()}
        for chapter, words in zip(scores, favoured, strict=True)
    ]


def title_ways(groups: Sequence[Sequence[Turn]]) -> dict[str, list[str]]:
    """Each way's titles for one recording's chapters (``groups`` of turns)."""
    from llama_index_video.chapters import titles

    texts = [" ".join(t.text for t in group) for group in groups]
    ways = {"shipped": titles.chapter_titles(texts)}
    with titler_settings(TOPIC_WORD_WEIGHT=20.0):
        ways["topic-word weight 20"] = titles.chapter_titles(texts)
    with titler_settings(TOPIC_WORD_WEIGHT=0.0):
        ways["no topic-word table (weight 0)"] = titles.chapter_titles(texts)
    with titler_settings(TOPIC_WORD_WEIGHT=3.0, TITLES_PER_WORD=len(texts)):
        ways["before (weight 3, no limit a word)"] = titles.chapter_titles(texts)
        before = titles.phrase_scores(texts)
    said_in = Counter(w for text in texts for w in set(titles.content_words(text)))
    idf = {w: math.log(1 + len(texts) / n) for w, n in said_in.items()}
    favoured = {
        "first minute's words x1.5": ([first_words(g) for g in groups], 1.5),
        "noun phrases' words x1.25": ([noun_words(text) for text in texts], 1.25),
        "central turns' words x1.25": ([central_words(g, idf) for g in groups], 1.25),
        "words after an agenda cue x1.25": ([cued_words(text) for text in texts], 1.25),
    }
    with titler_settings(TITLES_PER_WORD=len(texts)):
        for way, (words, factor) in favoured.items():
            picked = titles.pick_phrases(weighed_up(before, words, factor))
            ways[f"before, {way}"] = [", ".join(p).capitalize() for p in picked]
    return ways
