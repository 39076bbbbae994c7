""" "Not found", said in the question's language, and why, as a code that has none.

An answer that finds nothing says so in the language the question was asked in: a
French question gets French, whether the relevance gate found no moment
(:func:`nothing_relevant`, answered without a model) or the model read the moments and
found no answer in them (:func:`not_found_answer`, the sentence the system prompt tells
the model to reply with, :mod:`.prompts`). English is the fallback for a language not
in the tables, or a question too short to tell.

The question's language (:func:`question_language`) is told by what the package
already has for text: Chinese, Japanese and Korean by their scripts (kana makes it
Japanese, Hangul Korean, Han alone Chinese); the other languages by their stop words
(``bm25s``'s lists, as chapter titles use them: :func:`~llama_index_video.chapters.
titles.stop_words`) counted among the question's words, with a few letters only one
of them writes (``ñ``, ``ã``, ``ß``, ``å``...). The most counted wins; English wins
ties with it and a question with none.

The JSON of an answer keeps ``found: false`` and gives the reason as a code in no
language (:data:`NOTHING_RELEVANT`, :data:`MODEL_NOT_FOUND`, :data:`NO_ANSWER`) beside
the English ``reason`` sentence.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from llama_index_video.chapters.titles import stop_words
from llama_index_video.store.tokens import words

NOTHING_RELEVANT: Final = "nothing_relevant"
"""The reason code: no moment was relevant enough to answer from (the relevance gate)."""
MODEL_NOT_FOUND: Final = "model_not_found"
"""The reason code: the model read the moments found and said they do not answer it."""
NO_ANSWER: Final = "no_answer"
"""The reason code: the model returned no text."""

NOT_FOUND_ANSWERS: Final = {
    "en": "The indexed media does not contain the answer to this question.",
    "de": "Die indexierten Medien enthalten die Antwort auf diese Frage nicht.",
    "fr": "Les médias indexés ne contiennent pas la réponse à cette question.",
    "es": "Los medios indexados no contienen la respuesta a esta pregunta.",
    "pt": "Os conteúdos indexados não contêm a resposta a esta pergunta.",
    "it": "I contenuti indicizzati non contengono la risposta a questa domanda.",
    "nl": "De geïndexeerde media bevatten het antwoord op deze vraag niet.",
    "sv": "Det indexerade materialet innehåller inte svaret på den här frågan.",
    "zh": "已索引的媒体中没有这个问题的答案。",
    "ja": "索引されたメディアには、この質問の答えが含まれていません。",
}
"""What the model replies when the moments do not answer the question, by language."""
NOT_FOUND_ANSWER: Final = NOT_FOUND_ANSWERS["en"]
NOTHING_RELEVANT_ANSWERS: Final = {
    "en": "Not found in the index: no indexed moment is relevant enough to answer this.",
    "de": "Nicht im Index gefunden: kein indexierter Moment passt gut genug, um das zu "
    "beantworten.",
    "fr": "Introuvable dans l'index : aucun moment indexé n'est assez pertinent pour y répondre.",
    "es": "No se encontró en el índice: ningún momento indexado es lo bastante relevante "
    "para responder.",
    "pt": "Não encontrado no índice: nenhum momento indexado é relevante o bastante para "
    "responder.",
    "it": "Non trovato nell'indice: nessun momento indicizzato è abbastanza pertinente per "
    "rispondere.",
    "nl": "Niet gevonden in de index: geen geïndexeerd moment is relevant genoeg om dit te "
    "beantwoorden.",
    "sv": "Hittades inte i indexet: inget indexerat ögonblick är tillräckligt relevant för "
    "att svara på detta.",
    "zh": "索引中未找到：没有足够相关的已索引片段可以回答这个问题。",
    "ja": "索引に見つかりません：この質問に答えられるほど関連する場面がありません。",
}
"""What an answer without a model says when no moment is relevant, by language."""

WORDED: Final = ("en", "de", "fr", "es", "pt", "it", "nl", "sv")
"""The languages told by their words (the others of the tables by their script)."""
QUESTION_WORDS: Final = {
    "en": "what when where who whom why how which does did cost costs",
    "de": "was wann wo wer wen warum wieso wie welche welcher welches wurde gibt kostet",
    "fr": "quoi quand ou qui pourquoi comment quel quelle quels quelles combien est coute coutent",
    "es": "que cuando donde quien quienes porque como cual cuales cuanto cuantos cuesta cuestan",
    "pt": "que quando onde quem porque como qual quais quanto quantos foi custa custam",
    "it": "cosa quando dove chi perche come quale quali quanto quanti costa costano",
    "nl": "wat wanneer waar wie waarom hoe welke welk hoeveel werd kost kosten",
    "sv": "vad nar var vem varfor hur vilken vilket vilka hur manga kostar",
}
"""Words questions are put in, by language (as :func:`~llama_index_video.store.tokens.
words` writes them: no accents), besides the stop words: the question words, and the
verb a price is asked with, which tells "Quanto costa?" (Italian) from "Quanto custa?"
(Portuguese) where the question word alone is both languages'."""
_LETTERS: Final = {"ñ": "es", "¿": "es", "¡": "es", "ã": "pt", "õ": "pt", "ß": "de", "å": "sv"}
_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")


def question_language(question: str) -> str:
    """The language ``question`` is written in, as a Whisper code (module docstring).

    Each of its words counts for the languages that use it, shared among them (``la``
    is French, Spanish and Italian: a third each), so a word only one language has
    decides more than one most have.
    """
    if _KANA.search(question):
        return "ja"
    if _HANGUL.search(question):
        return "ko"
    if _HAN.search(question):
        return "zh"
    counts = dict.fromkeys(WORDED, 0.0)
    for token in words(question):
        using = [code for code in WORDED if token in _words_of(code)]
        for code in using:
            counts[code] += 1 / len(using)
    for char in question.lower():
        if char in _LETTERS:
            counts[_LETTERS[char]] += 1
    best = max(counts.values())
    if best == 0 or counts["en"] == best:
        return "en"
    return next(code for code in WORDED if counts[code] == best)


@cache
def _words_of(code: str) -> frozenset[str]:
    return stop_words(code) | frozenset(QUESTION_WORDS[code].split())


def not_found_answer(question: str) -> str:
    """The model's "not found" sentence in ``question``'s language (else English)."""
    return NOT_FOUND_ANSWERS.get(question_language(question), NOT_FOUND_ANSWERS["en"])


def nothing_relevant(question: str) -> str:
    """ "No moment is relevant enough" in ``question``'s language (else English)."""
    return NOTHING_RELEVANT_ANSWERS.get(question_language(question), NOTHING_RELEVANT_ANSWERS["en"])
