"""Chapter titles read words as the lexical index does and write them as said: an elided
article apart ("l'accident": "accident"), a word joined by its apostrophe kept whole
("prud'hommes"), an English possessive's word alone ("Maria's": "maria")."""

from __future__ import annotations

from llama_index_video.chapters.titles import chapter_titles

WEATHER_FR = "La météo annonce de la pluie demain sur la côte, avec du vent et des orages."
WEATHER_EN = "The weather tomorrow brings rain on the coast, wind and storms in the evening."


def title_words(title: str) -> list[str]:
    return title.lower().replace(",", " ").split()


def test_a_french_title_has_no_glued_article_and_keeps_a_words_apostrophe():
    court = (
        "Le conseil de prud'hommes a jugé l'affaire. Le conseil de prud'hommes a rendu sa "
        "décision sur l'accident de l'usine, et les prud'hommes ont donné raison à l'ouvrier."
    )
    title, _ = chapter_titles([court, WEATHER_FR], languages=["fr", "fr"])
    said = title_words(title)
    assert "prud'hommes" in said
    assert {"accident", "affaire"} <= set(said)
    assert not {"laccident", "laffaire", "lusine", "prudhommes"} & set(said)


def test_an_english_title_names_the_possessor_not_a_glued_possessive():
    budget = (
        "Maria's budget is too small. Maria's team asked for the company's approval of "
        "Maria's plan."
    )
    garden = "O'Brien's report on O'Brien's garden: O'Brien planted tomatoes."
    budget_title, _, garden_title = chapter_titles([budget, WEATHER_EN, garden])
    assert "maria" in title_words(budget_title)
    assert "marias" not in title_words(budget_title)
    assert "o'brien" in title_words(garden_title)
