"""How the lexical index reads text: its tokens, and the stop words BM25 leaves out.

Tokens (:func:`words`): Unicode text normalised (NFKC, accents stripped, casefolded),
split into runs of letters and digits; Chinese, Japanese and Korean characters are
one token each (they have no spaces between words); a number keeps its decimal point
and loses its thousands separators (``20,000`` and ``20000`` are one token, ``3.5``
stays ``3.5``). An apostrophe (``'``, ``’`` or ``ʼ``) joins the letters either side
("O'Brien" is "obrien", "o'clock" "oclock", "aujourd'hui" "aujourdhui"), with two
exceptions, so that a word is found alone. The French and Italian articles and
pronouns elided before a word of two letters or more (:data:`ELIDED`) are words of
their own: "l'usine" is "l usine", "qu'il" "qu il", "dell'anno" "dell anno". An
English ``'s`` at the end of a word (a possessive, or "is" / "has") is left out:
"Maria's" is "maria", "the team’s" "the team", "it's" "it"; a plural's possessive
loses its apostrophe ("the teams'" is "the teams"). The rules hold in any language, as
a query's language is not known: in English the first splits only a few names and
slang ("D'Arcy", "c'mon"), and a query says them as the stored text does. Stored words
carry :data:`TOKENS`, so an index whose words were read otherwise ("lusine",
"marias") has them read again (see
:func:`~llama_index_video.store.lexical.check_lexical`).

English stop words (NLTK's, and words questions are put in: "how much", "tell", "say")
and contractions ("what's", "don't", also typed without the apostrophe) are left out
of the BM25 scoring
(:func:`scored_words`) but kept for phrases. No stemming: this channel is for exact
words; the dense channels find the other forms. The stop words are ``bm25s``'s, which
:func:`import_bm25s` imports light (the matrices of :mod:`llama_index_video.store.bm25`
are built with it too).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import Any

from llama_index_video.errors import MissingDependencyError

# A number: digits with inner separators ("20,000", "3.5", "1.000.000"); else a run of
# letters and digits; or one Chinese/Japanese/Korean character.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""The Chinese, Japanese (kana) and Korean characters, each one token (a regex class body)."""
_TOKEN = re.compile(rf"\d+(?:[.,]\d+)*|[{CJK}]|[^\W_{CJK}]+")
_ACCENTED_SCRIPTS_END = "\u0530"  # Latin, Greek, Cyrillic come before
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
TOKENS = "3"
"""Which reading of :func:`words` stored words are: raised when it would read stored
text otherwise (2: elided articles split off; 3: an English ``'s`` left out)."""
APOSTROPHES = "'\u2019\u02bc"
"""The apostrophe as typed, as typeset (right single quote) and as a letter (modifier)."""
ELIDED = frozenset(
    (
        *("l", "d", "j", "m", "t", "s", "n", "c", "qu"),  # French: l'usine, qu'il
        *("jusqu", "lorsqu", "puisqu", "quoiqu", "quelqu", "presqu"),
        *("dell", "nell", "dall", "sull", "coll", "all", "un", "quest", "quell"),  # Italian
        *("sant", "tutt", "nessun"),
    )
)
"""Words elided before another (French, Italian): each is a token of its own."""
# An elided word at the start of a word, its apostrophe, then two letters or more (so
# "l'a", "c'è" and an English possessive such as "all's" are not split there).
_ELISION = re.compile(
    rf"(?<![\w{APOSTROPHES}])({'|'.join(sorted(ELIDED))})[{APOSTROPHES}](?=[^\W\d_]{{2}})"
)
_CLITIC_S = re.compile(rf"(?<=[^\W_])[{APOSTROPHES}]s\b")
"""An English ``'s`` ending a word: "Maria's", "it's" (not "o'sullivan")."""
_APOSTROPHE = re.compile(f"[{APOSTROPHES}]")
_WRITTEN = re.compile(rf"[^\W_]+(?:[{APOSTROPHES}][^\W_]+)*")
"""A word as written, apostrophes inside it kept ("aujourd'hui")."""


def words(text: str) -> list[str]:
    """The tokens of ``text`` as the lexical index reads them (module docstring)."""
    if text.isascii():  # most text: nothing to normalise
        return [_number(token) for token in _TOKEN.findall(_joined(text.lower()))]
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    kept: list[str] = []
    for char in folded:
        # Accents go from Latin, Greek and Cyrillic letters ("café" = "cafe"); marks of
        # other scripts are part of the letter (Japanese "で" is not "て").
        if unicodedata.combining(char) and kept and kept[-1] < _ACCENTED_SCRIPTS_END:
            continue
        kept.append(char)
    plain = unicodedata.normalize("NFC", "".join(kept))
    return [_number(token) for token in _TOKEN.findall(_joined(plain))]


def spellings(text: str) -> list[tuple[str, str]]:
    """Each word of ``text`` that :func:`words` reads as one token, with the token and
    the word as written, in lower case (``("aujourdhui", "aujourd'hui")``,
    ``("eglise", "église")``): what reads a token back to its spelling."""
    found = []
    for written in _WRITTEN.findall(_split(text.lower())):
        tokens = words(written)
        if len(tokens) == 1:
            found.append((tokens[0], written))
    return found


def _joined(text: str) -> str:
    """``text`` split as :func:`_split` does, the other apostrophes left out
    ("l'usine's" -> "l usine", "o'clock" -> "oclock")."""
    if not any(mark in text for mark in APOSTROPHES):  # most text: a quicker test
        return text
    return _APOSTROPHE.sub("", _split(text))


def _split(text: str) -> str:
    """``text`` (lower case) with an elided word split off its word and an English
    ``'s`` left out (module docstring)."""
    return _CLITIC_S.sub("", _ELISION.sub(r"\1 ", text))


def _number(token: str) -> str:
    if not token[0].isdigit():
        return token
    if _THOUSANDS.fullmatch(token):
        return token.replace(",", "")
    return token.replace(",", ".")  # "3,5" (a decimal comma) reads as "3.5"


def scored_words(tokens: Iterable[str]) -> list[str]:
    """``tokens`` without English stop words: what BM25 scores."""
    stop = english_stop_words()
    return [t for t in tokens if t not in stop]


# How questions are put, beyond NLTK's English stop words: words a query uses to ask,
# not what it asks about. A query word no node holds counts against a match (see
# LexicalSnapshot.search), so these must not.
_QUESTION_WORDS = (
    *("much", "many", "could", "would", "please", "also"),
    *("tell", "say", "says", "said", "mention", "mentions", "mentioned"),
    *("talk", "talks", "talked", "video", "recording", "clip"),
)
# Contractions of function words ("what's" is read "what", "don't" "dont"), but those
# whose letters spell a word of their own ("we'll", "she'd", "I'd").
_CONTRACTIONS = """
what's who's where's when's why's how's that's there's here's he's she's let's i'm you're
we're they're what're i've you've we've they've could've would've should've might've
must've you'd he'd they'd it'd who'd you'll they'll it'll that'll who'll there'll
don't doesn't didn't isn't aren't wasn't weren't can't couldn't won't wouldn't
shouldn't haven't hasn't hadn't mustn't mightn't needn't ain't shan't
"""


@cache
def english_stop_words() -> frozenset[str]:
    """The words :func:`scored_words` leaves out: NLTK's English stop words (``bm25s``'s
    longer list), the words questions are put in and contractions, each read as
    :func:`words` reads it (NLTK's "don't" is "dont"), and as read when typed without
    its apostrophe (a query's "whats")."""
    nltk = import_bm25s().stopwords.STOPWORDS_EN_PLUS
    listed = (*nltk, *_QUESTION_WORDS, *_CONTRACTIONS.split())
    typed = (_APOSTROPHE.sub("", word) for word in listed)
    return frozenset(token for word in (*listed, *typed) for token in words(word))


@cache
def import_bm25s() -> Any:
    """``bm25s``, imported without numba and scipy unless something imported them already.

    bm25s uses them when it finds them, but its numpy backend, which the lexical index
    uses, needs neither, and importing them costs about 4 CPU s (numba is there when
    openai-whisper is installed): more than a whole cold search.
    """
    hidden = [name for name in ("numba", "scipy") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` fail
    try:
        import bm25s
        import bm25s.stopwords
    except ImportError as exc:
        raise MissingDependencyError("bm25s", "local", "The lexical index") from exc
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return bm25s
