"""A chapter's title without a language model: the key phrases that set it apart.

Each chapter's words (the lexical index's tokens, stop words removed) are weighed by
TF-IDF against the recording's other chapters, so a word said throughout the meeting
("remote", "project") ranks below the words of this stretch ("battery", "rubber"),
though not to nothing (:data:`IDF_FLOOR`). A pair of words said one after the other,
as a phrase, often enough (``remote control``), stands for both of its words. The
title is the best :data:`TITLE_PHRASES` phrases, joined by commas, first letter
capitalised. Both settings were chosen on QMSum's 162 training meetings and checked
on its 70 others (``benchmarks/meetings.py --qmsum``).

People name a meeting's sections with some words more than others ("amendment",
"remote", "design", "budget"; "yeah" never): ``topic_words.tsv`` holds, for the
words that named an annotated topic of a chapter saying them in those 162 meetings, how
often they did (``benchmarks/meeting_topic_words.py``; the names of any meeting's parts,
"presentation" or "discussion", name no topic there). An English phrase's score is
multiplied by one plus :data:`TOPIC_WORD_WEIGHT` times its best word's rate (smoothed
towards the table's overall rate by :data:`TOPIC_WORD_PRIOR` chapters; a word not in
the table has that overall rate).

Titles are picked for the whole recording at once (:func:`pick_phrases`): the best
phrases first, each chapter's scores taken relative to its own best, and a word (or its
plural) goes into at most :data:`TITLES_PER_WORD` titles, so the word a meeting is about
("remote control") names the chapters where it counts most and the others name what is
their own. That rule let the topic-word weight rise without titles repeating each other:
both were chosen on QMSum's train split as the best pair whose titles keep as many of
their words to themselves as the titles before did (``benchmarks/meetings.py --qmsum``).

Stop words are the chapter's language's: English's are the lexical index's; another
language's are those of ``bm25s``'s list for it (NLTK's: Danish, Dutch, French, German,
Italian, Norwegian, Portuguese, Russian, Spanish, Swedish, Turkish; Chinese and Korean)
and of the stopwords-iso list for it (``stopwordsiso``, 58 languages, MIT), read as the
index reads words (accents stripped, so Spanish ``está`` is ``esta``, the title then
written as the chapter spelled it most often). NLTK's lists alone left function words in
the titles of real FLEURS readings ("pueden", "través", "ainsi", "cela", "car",
"através"; ``benchmarks/language_titles.py``); stopwords-iso's also hold a few generic
nouns (German ``zeit``, ``jahr``; Spanish ``trabajo``), which English's fillers leave out
too. A language neither has a list for has none, so its titles may hold a function word
rather than lose a content word to another language's list. Without the language,
English's. A chapter heard in several languages (a recording that changes language
inside it) leaves out the stop words of each.

Chinese and Japanese are written without spaces, so their words are found another way
(:func:`terms`): a run of kanji (Han characters) is cut at the Chinese stop words (bm25s's
list) and kana are left out (hiragana carry Japanese grammar; a katakana run is one
loanword); a piece of two to :data:`CJK_WORD` characters is one word, a longer one gives
its two-character words. Korean words are spaced: a word loses its trailing particle
(:data:`HANGUL_PARTICLES`), a verb's polite ending drops it (:data:`HANGUL_VERB_ENDINGS`),
and Korean's stop words are left out. :data:`CJK_FILLERS` are talk words the lists
leave in. These words count from two characters, and a phrase of them is written
without spaces.

Conversation carries words that stop-word lists leave in (``yeah``, ``gonna``,
``think``, contractions written without their apostrophe): :data:`FILLERS` drops them
too, and so does :data:`MIN_LETTERS` spelled-out letters.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from llama_index_video.errors import MissingDependencyError
from llama_index_video.store.tokens import (
    CJK,
    english_stop_words,
    import_bm25s,
    spellings,
    words,
)

TITLE_PHRASES = 4
IDF_FLOOR = 0.5
"""Added to every phrase's inverse chapter frequency, so a phrase said throughout the
recording still counts a little: people name a section with the recording's own words
("remote control design")."""
MIN_LETTERS = 3
"""Shorter tokens ("p", "th", a spelled-out "l c") are no title words (but for Chinese,
Japanese and Korean ones, see the module docstring)."""
CJK_WORD = 4
"""A kanji piece (between stop words) of up to this many characters is one word; a longer
one is read as its two-character words."""
TOPIC_WORD_WEIGHT = 10.0
TITLES_PER_WORD = 2
"""A word (or its plural) is in at most this many of one recording's titles."""
TOPIC_WORD_PRIOR = 5.0
"""A word's topic rate counts as if this many more chapters had said it at the table's
overall rate."""
MIN_PHRASE_COUNT = 2
"""A two-word phrase said fewer times than this in a chapter is not a title phrase."""
_FILLER_TEXT = """
    yeah yes yep okay ok um uh mm hmm uhm erm ah oh huh gonna wanna gotta like think know
    mean actually really right well just sort kind thing things stuff lot bit maybe
    probably guess got get getting go going went say said says see look sure good
    great fine alright anyway basically mm-hmm let lets want need make made also one two
    way something anything everything nothing would could should might can will
    vocalsound disfmarker nonvocalsound gap pause laugh laughs laughter cough
dont doesnt didnt cant wont isnt arent wasnt werent havent hasnt wouldnt couldnt shouldnt
theyre youre were weve ive youve theyve thats theres whats hes shes lets youll
ill itll youd theyd wed hadnt wouldve couldve shouldve thatll therell wholl whos
"""
_GENERIC_TEXT = """
    use used using try tried trying find found give gave given take took taken put
    come came coming tell told ask asked hear heard read thought feel felt keep kept
    start started add added enter change changed work working looking seem seems
    talk talking mentioned happen happens happened means call called done doing
    people person someone everyone everybody somebody time times today yesterday
    idea ideas question questions point points case part fact example sense number
    important different certain certainly possible sometimes always never often usually
    even else around whether related quite rather pretty already still again ever perhaps
    obviously exactly definitely especially particularly generally presently partly
    hundred thousand three four five six seven eight nine ten twenty thirty forty fifty
    first second third next last another many much few several less least new old
    may shall must thank thanks please sorry welcome chair minister
"""
_FUNCTION_TEXT = """
    though although yet upon unto thus hence whilst amongst whereas thereby
    thee thou thy thine ye hath doth
"""
"""English function words NLTK's stop-word list lacks: a new user's 14 minutes of real
LibriSpeech readings were titled "Though, days, influence, recited" and "Best, thee,
thou, dishes"."""
FILLERS = frozenset((_FILLER_TEXT + _GENERIC_TEXT + _FUNCTION_TEXT).split())
TOPIC_WORDS = Path(__file__).with_name("topic_words.tsv")
_CJK_FILLER_TEXT = "很 还 都 会 不 没 做 说 想 看 讨论 接下来 然后 那么 好的 对 嗯 一下 대해"
CJK_FILLERS = frozenset(_CJK_FILLER_TEXT.split())
_PARTICLE_TEXT = "에서 으로 에게 까지 부터 은 는 이 가 을 를 에 로 의 도 와 과 만"
HANGUL_PARTICLES = tuple(_PARTICLE_TEXT.split())
"""Two-syllable ones first, so ``에서`` goes before ``에``."""
HANGUL_VERB_ENDINGS = ("니다", "시다", "요")
_CJK_RUN = re.compile(rf"[{CJK}]+")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SCRIPT_RUN = re.compile(rf"[{_HAN}]+|[\u30a0-\u30ff]+|[\uac00-\ud7af]+")
"""A run of kanji, of katakana, or of Hangul (hiragana between them are left out)."""


def chapter_titles(
    texts: Sequence[str], *, languages: Sequence[str | None] | None = None
) -> list[str]:
    """One title per chapter, from what was said in each (``texts``, in order); a chapter
    with no content words gets ``""``. The topic-word table helps choose a title's
    phrases; they are written in the order of how much they are the chapter's own (said
    often here, rarely elsewhere), so a title opens with what sets its chapter apart.

    Args:
        texts: What was said in each chapter.
        languages: Each chapter's language (Whisper codes, as units record them; a
            chapter heard in several joins them by ``+``, the most spoken first), whose
            stop words are left out; None (or a None code): English.
    """
    weighed = _weighed(texts, languages)
    picked = pick_phrases(_products(weighed))
    titles = []
    for text, phrases, own in zip(texts, picked, weighed, strict=True):
        written = _written(text)
        ordered = sorted(phrases, key=lambda p: -own[p][0])
        titles.append(_title([_spelled(p, written) for p in ordered]))
    return titles


def phrase_scores(
    texts: Sequence[str], *, languages: Sequence[str | None] | None = None
) -> list[dict[str, float]]:
    """Each chapter's phrases (index tokens, a space between a phrase's words) and how
    well each would name it: said often here, rarely in the other chapters, and (in
    English) with a word that named meeting topics (module docstring).

    Args:
        texts: What was said in each chapter.
        languages: As for :func:`chapter_titles`.
    """
    return _products(_weighed(texts, languages))


def _products(weighed: list[dict[str, tuple[float, float]]]) -> list[dict[str, float]]:
    return [{p: own * named for p, (own, named) in w.items()} for w in weighed]


def _weighed(
    texts: Sequence[str], languages: Sequence[str | None] | None
) -> list[dict[str, tuple[float, float]]]:
    """Each chapter's phrases with how much they are its own (count times inverse chapter
    frequency) and the topic-word factor (1 for a language without the table)."""
    if languages is not None and len(languages) != len(texts):
        raise ValueError(f"{len(texts)} chapters but {len(languages)} languages")
    codes = languages if languages is not None else [None] * len(texts)
    phrase_counts = [_phrases(terms(text, code)) for text, code in zip(texts, codes, strict=True)]
    documents = Counter(phrase for counts in phrase_counts for phrase in counts)
    total = len(texts)
    return [
        {
            phrase: (
                count * (math.log(1 + total / documents[phrase]) + IDF_FLOOR),
                1 + TOPIC_WORD_WEIGHT * max(map(topic_rate, phrase.split()))
                if code is None or code.split("+")[0] == "en"
                else 1.0,
            )
            for phrase, count in counts.items()
        }
        for counts, code in zip(phrase_counts, codes, strict=True)
    ]


def pick_phrases(scores: Sequence[Mapping[str, float]]) -> list[list[str]]:
    """Up to :data:`TITLE_PHRASES` phrases for each chapter, best first: phrases are
    taken in the order of their score over their chapter's best, across the recording,
    skipping one that shares a word with a phrase its title has, or whose word is in
    :data:`TITLES_PER_WORD` titles already (unless its chapter would have none). One
    pass over the phrases."""
    ranked = sorted(
        (
            (score / max(chapter.values()), index, phrase)
            for index, chapter in enumerate(scores)
            for phrase, score in chapter.items()
        ),
        key=lambda c: (-c[0], c[1], c[2]),
    )
    picked: list[list[str]] = [[] for _ in scores]
    held: list[set[str]] = [set() for _ in scores]
    titles_with = Counter[str]()
    for _, index, phrase in ranked:
        if len(picked[index]) == TITLE_PHRASES:
            continue
        parts = _parts(phrase)
        if parts & held[index] or any(titles_with[part] >= TITLES_PER_WORD for part in parts):
            continue
        picked[index].append(phrase)
        held[index] |= parts
        titles_with.update(parts)
    # A chapter all of whose phrases other titles took still gets its best one.
    return [
        chosen or ([min(chapter, key=lambda p: (-chapter[p], p))] if chapter else [])
        for chosen, chapter in zip(picked, scores, strict=True)
    ]


def content_words(
    text: str, language: str | None = None, *, kanji_pairs: bool = False
) -> list[str]:
    """The words of ``text`` that may name a topic, in order (:func:`terms` without the
    gaps): what titles are made of, and what segmentation compares (with
    ``kanji_pairs``, every two-character word of a kanji piece, however long: the usual
    way to compare Chinese text, which also finds 预算 in 超出预算)."""
    return [t for t in terms(text, language, kanji_pairs=kanji_pairs) if t is not None]


def terms(text: str, language: str | None = None, *, kanji_pairs: bool = False) -> list[str | None]:
    """The tokens of ``text`` (as the lexical index reads them; Chinese, Japanese and
    Korean as words, see the module docstring), None in place of a stop word of
    ``language`` (a Whisper code; None: English), a filler, a number or a spelled-out
    letter: two-word phrases do not cross a None."""
    found: list[str | None] = []
    at = 0
    for run in _CJK_RUN.finditer(text):
        found += _content(words(text[at : run.start()]), language)
        found += _cjk_words("".join(words(run[0])), kanji_pairs=kanji_pairs)
        found.append(None)
        at = run.end()
    return found + _content(words(text[at:]), language)


def topic_rate(word: str) -> float:
    """How often ``word`` (an index token) named a chapter's topic when said in it, on the
    meetings of ``topic_words.tsv`` (module docstring)."""
    rates, overall = _topic_rates()
    return rates.get(word, overall)


@cache
def _topic_rates() -> tuple[dict[str, float], float]:
    rows = [line.split("\t") for line in TOPIC_WORDS.read_text(encoding="utf-8").splitlines()]
    (_, named, said), *words = rows
    overall = int(named) / int(said)
    rates = {
        word: (int(n) + TOPIC_WORD_PRIOR * overall) / (int(s) + TOPIC_WORD_PRIOR)
        for word, n, s in words
    }
    return rates, overall


@cache
def stop_words(language: str | None) -> frozenset[str]:
    """The stop words of ``language`` (a Whisper code) as index tokens: English's (also
    for None), else those of ``bm25s``'s and stopwords-iso's lists for it (see the module
    docstring); those of each language of ``"fr+de"``."""
    if language is not None and "+" in language:
        return frozenset().union(*map(stop_words, language.split("+")))
    if language in (None, "en"):
        return english_stop_words()
    listed = _import_stopwordsiso().stopwords(language)
    with contextlib.suppress(ValueError):  # raised when bm25s has no list for it
        listed |= set(import_bm25s().tokenization.Tokenizer(stopwords=language).stopwords)
    # A word the index reads as several tokens (Chinese 一下: 一, 下) is no one stop word.
    return frozenset(tokens[0] for tokens in (words(word) for word in listed) if len(tokens) == 1)


def _import_stopwordsiso() -> Any:
    try:
        import stopwordsiso
    except ImportError as exc:
        raise MissingDependencyError("stopwordsiso", "local", "Chapter titles") from exc
    return stopwordsiso


def _stem(token: str) -> str:
    """``token`` without a plural ``s``, to tell ``colours`` and ``colour`` apart no more."""
    return token[:-1] if len(token) > 3 and token.endswith("s") and token[-2] != "s" else token


def _content(tokens: list[str], language: str | None) -> list[str | None]:
    """``tokens`` with the stop words of ``language`` and fillers as None (phrases do not
    cross them)."""
    stop = stop_words(language)
    return [
        t
        if t not in stop and t not in FILLERS and len(t) >= MIN_LETTERS and not t.isdigit()
        else None
        for t in tokens
    ]


def _cjk_words(run: str, *, kanji_pairs: bool) -> list[str | None]:
    """The words of a run of Chinese, Japanese or Korean characters (module docstring;
    ``kanji_pairs``: see :func:`content_words`)."""
    found: list[str | None] = []
    for piece in _SCRIPT_RUN.findall(run):
        if "\uac00" <= piece[0] <= "\ud7af":
            found.append(_korean_word(piece))
        elif "\u30a0" <= piece[0] <= "\u30ff":
            found.append(piece if len(piece) > 1 else None)
        else:
            for part in _han_stop_words().split(piece):
                if len(part) <= (1 if kanji_pairs else CJK_WORD):
                    found.append(part if len(part) > 1 and part not in CJK_FILLERS else None)
                else:
                    # (overlapping pairs are no phrase: None between them)
                    found += [w for i in range(len(part) - 1) for w in (part[i : i + 2], None)]
                found.append(None)
    return found


@cache
def _han_stop_words() -> re.Pattern[str]:
    """Chinese stop words (``bm25s``'s list and the one-character fillers), longest first, as
    a pattern to cut at."""
    listed = {*import_bm25s().stopwords.STOPWORDS_CHINESE, *(w for w in CJK_FILLERS if len(w) == 1)}
    return re.compile("|".join(sorted(map(re.escape, listed), key=len, reverse=True)))


def _korean_word(word: str) -> str | None:
    """``word`` without its particle; None for a stop word, a verb or one syllable."""
    if word.endswith(HANGUL_VERB_ENDINGS):
        return None
    for particle in HANGUL_PARTICLES:
        if word.endswith(particle) and len(word) > len(particle) + 1:
            word = word[: -len(particle)]
            break
    kept = len(word) > 1 and word not in _hangul_stop_words() and word not in CJK_FILLERS
    return word if kept else None


@cache
def _hangul_stop_words() -> frozenset[str]:
    return frozenset(import_bm25s().stopwords.STOPWORDS_KOREAN)


def _cjk(word: str) -> bool:
    return bool(_CJK_RUN.fullmatch(word))


def _phrases(tokens: list[str | None]) -> Counter[str]:
    """Single content words, and two-word phrases said at least :data:`MIN_PHRASE_COUNT`
    times; a phrase's words are then not counted on their own."""
    singles = Counter(t for t in tokens if t is not None)
    pairs = Counter(f"{a} {b}" for a, b in itertools.pairwise(tokens) if a and b and a != b)
    counts = Counter({phrase: n for phrase, n in pairs.items() if n >= MIN_PHRASE_COUNT})
    for phrase, n in counts.items():
        for word in phrase.split():
            singles[word] -= n
    counts.update({word: n for word, n in singles.items() if n > 0})
    return counts


def _parts(phrase: str) -> set[str]:
    """The words of ``phrase`` without a plural ``s``; kanji words also as their
    two-character pairs, as they overlap in their characters (電池, 電池寿命)."""
    parts = {_stem(word) for word in phrase.split()}
    return parts | {w[i : i + 2] for w in phrase.split() if _cjk(w) for i in range(len(w) - 1)}


def _written(text: str) -> dict[str, str]:
    """How each token of ``text`` was written most often, lower case with its accents
    and apostrophes (``gehause``: ``gehäuse``, ``aujourdhui``: ``aujourd'hui``); tokens
    are folded (:func:`words`), titles should not be."""
    spelled: dict[str, Counter[str]] = {}
    for token, word in spellings(text):
        if token != word:
            spelled.setdefault(token, Counter())[word] += 1
    return {token: forms.most_common(1)[0][0] for token, forms in spelled.items()}


def _spelled(phrase: str, written: dict[str, str]) -> str:
    """``phrase`` as the chapter wrote it: its words' usual spelling, kanji and kana
    words joined without a space."""
    parts = phrase.split()
    text = written.get(parts[0], parts[0])
    for before, word in itertools.pairwise(parts):
        text += ("" if _cjk(before) and _cjk(word) else " ") + written.get(word, word)
    return text


def _title(phrases: list[str]) -> str:
    text = ", ".join(phrases)
    return text[:1].upper() + text[1:]
