""" "Not found" in the question's language, and why as a code in none.

A question that finds nothing was answered in English whatever its language ("The
indexed media does not contain the answer ..."). Now the gate's "not found" (answered
without a model) and the model's (the sentence the system prompt tells it to reply
with) are said in the question's language, told by its script or its words; the JSON
keeps ``found: false`` and adds a ``reason_code``. The index is the French and German
one of :mod:`tests.search.test_language_filter`; Claude is the fake Anthropic API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llama_index_video.answering.extractive import extractive_answer
from llama_index_video.answering.not_found import (
    NOT_FOUND_ANSWER,
    NOT_FOUND_ANSWERS,
    NOTHING_RELEVANT_ANSWERS,
    question_language,
)
from llama_index_video.cli.main import main
from tests.fakes.anthropic_server import text_reply
from tests.search.test_language_filter import index  # noqa: F401

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real_languages"

QUESTIONS = {
    "en": "When was the mountain first climbed?",
    "de": "Wann wurde das Matterhorn zum ersten Mal bestiegen?",
    "fr": "Où a eu lieu l'accident ?",
    "es": "¿Dónde ocurrió el accidente?",
    "pt": "Onde aconteceu o acidente?",
    "it": "Chi ha scalato la montagna per primo?",
    "nl": "Wanneer is de berg beklommen?",
    "sv": "När besteg man berget första gången?",
    "zh": "山是什么时候第一次被攀登的？",
    "ja": "山はいつ初めて登られましたか？",
}


@pytest.mark.parametrize("code", sorted(QUESTIONS))
def test_a_question_is_read_in_its_language(code):
    assert question_language(QUESTIONS[code]) == code


PRICE_QUESTIONS = {
    "Quanto costa?": "it",  # read as Portuguese: "quanto" is both, and a tie went to pt
    "Quanto costano i biglietti?": "it",
    "Quanto custa?": "pt",
    "Quanto custam os bilhetes?": "pt",
    "¿Cuánto cuesta?": "es",
    "Combien ça coûte ?": "fr",
    "Wie viel kostet das?": "de",
    "Hoeveel kost het?": "nl",
    "Vad kostar det?": "sv",
    "How much does it cost?": "en",
}


@pytest.mark.parametrize("question", sorted(PRICE_QUESTIONS))
def test_a_price_question_is_read_in_its_language_by_its_verb(question):
    assert question_language(question) == PRICE_QUESTIONS[question]


def test_real_transcripts_are_read_in_their_language():
    """The reference transcripts of the real recordings (FLEURS, MLS, Common Voice,
    AISHELL-1) in the languages of the tables."""
    checked = 0
    for described in sorted(FIXTURES.glob("*.json")):
        about = json.loads(described.read_text())
        if about.get("transcript") and about["language"] in NOT_FOUND_ANSWERS:
            assert question_language(about["transcript"]) == about["language"], described.name
            checked += 1
    assert checked >= 6


def test_no_words_to_tell_by_is_english():
    assert question_language("Matterhorn 1865?") == "en"
    assert extractive_answer("Matterhorn 1865?", []).text == NOTHING_RELEVANT_ANSWERS["en"]


def test_the_model_is_told_and_its_english_is_put_in_the_question_s_language(
    index,  # noqa: F811
    make_claude,
    fake_anthropic,
):
    question = "Quand a eu lieu la première ascension du Matterhorn ?"
    fake_anthropic.enqueue(text_reply(NOT_FOUND_ANSWER))  # told French, said English
    answer = index.ask(question, llm=make_claude())
    system = fake_anthropic.messages_requests()[0].body["system"]
    assert f'"{NOT_FOUND_ANSWERS["fr"]}"' in system and NOT_FOUND_ANSWER not in system
    assert not answer.found and answer.text == NOT_FOUND_ANSWERS["fr"]
    assert answer.reason_code == "model_not_found"
    fake_anthropic.enqueue(text_reply(NOT_FOUND_ANSWERS["fr"] + " Les moments parlent du train."))
    again = index.ask(question, llm=make_claude())
    assert not again.found and again.text.startswith(NOT_FOUND_ANSWERS["fr"])


def test_nothing_found_is_said_in_the_question_s_language(index, capsys):  # noqa: F811
    question = "Quelle est la recette du gâteau au chocolat ?"
    answer = index.ask(question, languages=["ja"])  # no moment in Japanese: nothing found
    assert not answer.found and answer.text == NOTHING_RELEVANT_ANSWERS["fr"]
    shown = answer.to_dict()
    assert shown["found"] is False and shown["reason_code"] == "nothing_relevant"
    folder = str(index.path)
    index.close()
    argv = ["ask", "Wie viel kostet die Seilbahn?", "--language", "ja", "--index", folder]
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["answer"] == NOTHING_RELEVANT_ANSWERS["de"]
    assert (printed["found"], printed["reason_code"]) == (False, "nothing_relevant")
