"""French and Italian elisions in the exact-word index: "l'université" holds "université".

The recording is silence with a French subtitle file (``.fr.srt``) of three real FLEURS
readings (``tests/fixtures/fleurs_languages``) at known times, so no speech recognition
is involved; the readings say "l'accident", "l'un avec l'autre", "de l'université",
"l'école" and "d'album", and never the words without their article.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.search.relevance import index_vocabulary
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.tokens import ELIDED, words
from tests.search.silent_subtitles import subtitled_silence

READINGS = Path(__file__).parents[1] / "fixtures" / "fleurs_languages" / "clips.json"
CUES = ((2.0, 10.0, "fr-000.ogg"), (20.0, 28.0, "fr-008.ogg"), (40.0, 54.0, "fr-009.ogg"))
UNIVERSITY_AT = 20.0  # fr-008: "... ont déclaré des chercheurs de l'université"
SCHOOL_AT = 40.0  # fr-009: "par exemple des étudiants de l'école bennet ..."


@pytest.fixture(scope="module")
def french_index(tmp_path_factory, make_wav, embed_model) -> Iterator[tuple[Any, Path]]:
    said = {clip["audio"]: clip["transcript"] for clip in json.loads(READINGS.read_text())["clips"]}
    with subtitled_silence(
        tmp_path_factory.mktemp("elisions"),
        [(start, end, said[clip]) for start, end, clip in CUES],
        subtitles="fr.srt",
        make_wav=make_wav,
        embed_model=embed_model,
    ) as built:
        yield built


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("l'usine", ["l", "usine"]),
        ("L\u2019usine", ["l", "usine"]),  # the typeset apostrophe
        ("l\u02bcusine", ["l", "usine"]),  # the modifier letter apostrophe
        ("qu'il", ["qu", "il"]),
        ("dell'anno", ["dell", "anno"]),
        ("jusqu'à l'état", ["jusqua", "l", "etat"]),  # "à": one letter, no elision
        ("aujourd'hui", ["aujourdhui"]),  # one word
        ("O'Brien at five o'clock", ["obrien", "at", "five", "oclock"]),
        ("what's, don't, it\u2019s, all's", ["what", "dont", "it", "all"]),
        ("rock'n'roll", ["rocknroll"]),
    ],
)
def test_an_elided_article_is_a_word_of_its_own_and_english_stays_joined(text, tokens):
    assert words(text) == tokens


def test_a_word_said_after_an_elided_article_is_found_by_its_exact_words(french_index):
    index, audio = french_index
    for query, said_at in (('"université"', UNIVERSITY_AT), ('"école"', SCHOOL_AT)):
        hits = index.search(query, top_k=3)
        assert hits, query
        assert {hit.source for hit in hits} == {str(audio)}
        assert abs(hits[0].start - said_at) <= 1.0
    # the elided form finds the same moment, whichever apostrophe the query types
    for query in ('"l\'université"', '"l\u2019université"', '"lʼuniversité"'):
        (hit,) = index.search(query, top_k=3)
        assert abs(hit.start - UNIVERSITY_AT) <= 1.0


def test_the_relevance_gate_finds_the_word_in_the_index(french_index):
    index, _ = french_index
    vocabulary = index_vocabulary(index.lexical.snapshot())
    assert vocabulary.absent("université chercheurs") == 0.0
    assert vocabulary.absent("accident école album") == 0.0


def test_words_an_older_version_read_are_read_again(french_index, tmp_path, capsys):
    index, _ = french_index
    folder = tmp_path / "index"
    shutil.copytree(index.path, folder)
    words_file = folder / "lexical" / "words.sqlite"
    glued = re.compile(rf"\b({'|'.join(ELIDED)}) (?=[^\W\d_]{{2}})")
    with sqlite3.connect(words_file) as db:  # as the version before elisions read them
        rows = db.execute("SELECT node_id, words FROM words").fetchall()
        db.executemany(
            "UPDATE words SET words = ? WHERE node_id = ?",
            [(glued.sub(r"\1", text), node_id) for node_id, text in rows],
        )
        db.execute("DELETE FROM meta WHERE key = 'tokens'")
    LexicalStore(folder).refresh()
    assert "luniversite" in words_file.read_bytes().decode("utf-8", "replace")

    assert main(["verify", "--index", str(folder)]) != 0
    assert "1 file(s) whose words an older version read" in capsys.readouterr().out
    assert main(["verify", "--repair", "--index", str(folder)]) == 0
    capsys.readouterr()
    assert main(["verify", "--index", str(folder)]) == 0
    with sqlite3.connect(words_file) as db:
        stored = " ".join(text for (text,) in db.execute("SELECT words FROM words"))
    assert " l universite" in stored and "luniversite" not in stored
    repaired = VideoIndex(folder, embed_model=index.embed_model)
    try:
        (hit,) = repaired.search('"université"', top_k=3)
        assert abs(hit.start - UNIVERSITY_AT) <= 1.0
    finally:
        repaired.close()
