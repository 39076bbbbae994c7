"""English possessives in the exact-word index: "Maria's" holds "Maria".

The recording is silence with an English subtitle file at known times, so no speech
recognition is involved. The first cue is a real meeting turn (QMSum, AMI ES2002b, turn
534: "from a manufacturer's point of view"); the others say "Maria’s" (the typeset
apostrophe), "the company's" and "the engineers'", and never those words alone.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.store.lexical import LexicalStore
from llama_index_video.store.tokens import TOKENS, scored_words, words
from tests.search.silent_subtitles import subtitled_silence

CUES = (
    (
        2.0,
        9.0,
        "Um this may not map very well to advanced functionality especially, but I think "
        "that um from a manufacturer's point of view, from a person designing the device,",
    ),
    (20.0, 26.0, "Maria\u2019s budget covers the company's trial in March."),
    (40.0, 46.0, "The engineers' report is due on Friday."),
)
MANUFACTURER, MARIA, ENGINEERS = ((start, end) for start, end, _ in CUES)
POSSESSIVES = ("manufacturer's", "Maria\u2019s", "company's")


@pytest.fixture(scope="module")
def english_index(tmp_path_factory, make_wav, embed_model) -> Iterator[tuple[Any, Path]]:
    with subtitled_silence(
        tmp_path_factory.mktemp("possessives"),
        CUES,
        subtitles="en.srt",
        make_wav=make_wav,
        embed_model=embed_model,
    ) as built:
        yield built


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Maria's budget", ["maria", "budget"]),
        ("the team\u2019s plan", ["the", "team", "plan"]),  # the typeset apostrophe
        ("the teams' plan", ["the", "teams", "plan"]),  # a plural's possessive
        ("O'Brien's car at five o'clock", ["obrien", "car", "at", "five", "oclock"]),
        ("O'Sullivan", ["osullivan"]),  # an 's starting a word stays in it
        ("l'usine's", ["l", "usine"]),
    ],
)
def test_an_english_s_is_left_out_so_the_word_is_read_alone(text, tokens):
    assert words(text) == tokens


def test_contractions_with_s_stay_out_of_the_scoring():
    asked = "It's late, let's see what's left and who's here; whats next?"
    assert scored_words(words(asked)) == ["late", "see", "left", "next"]


def test_a_word_said_only_as_a_possessive_is_found_by_its_exact_word(english_index):
    index, audio = english_index
    for query, (start, end) in (
        ('"manufacturer"', MANUFACTURER),
        ('"Maria"', MARIA),
        ('"company"', MARIA),
        ('"Maria\'s budget"', MARIA),
        ('"engineers"', ENGINEERS),
    ):
        (hit,) = index.search(query, top_k=3)
        assert hit.source == str(audio)
        assert start - 1.0 <= hit.start <= end, query  # within its cue, to the second


def test_an_index_read_before_possessives_is_read_again_once(
    english_index, tmp_path, capsys, caplog
):
    index, audio = english_index
    folder = tmp_path / "index"
    shutil.copytree(index.path, folder)
    words_file = folder / "lexical" / "words.sqlite"
    # as tokens "2" read them: the apostrophe joined the letters either side
    old = {words(p)[0]: words(re.sub("['\u2019]", "", p))[0] for p in POSSESSIVES}
    glued = re.compile(rf"\b({'|'.join(old)})\b")
    with sqlite3.connect(words_file) as db:
        rows = db.execute("SELECT node_id, words FROM words").fetchall()
        db.executemany(
            "UPDATE words SET words = ? WHERE node_id = ?",
            [(glued.sub(lambda m: old[m[1]], text), node_id) for node_id, text in rows],
        )
        db.execute("UPDATE meta SET value = '2' WHERE key = 'tokens'")
        db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    assert LexicalStore(folder).refresh()  # the matrices of the old words

    stale = VideoIndex(folder, embed_model=index.embed_model)
    try:  # searching before the repair: the old words, and a warning saying so
        stale.search('"Maria"', top_k=3)
        assert "verify --repair" in caplog.text
        assert "maria" not in stale.lexical.snapshot().frequencies
    finally:
        stale.close()
    assert main(["verify", "--index", str(folder)]) != 0
    assert "1 file(s) whose words an older version read" in capsys.readouterr().out
    assert main(["verify", "--repair", "--index", str(folder)]) == 0
    capsys.readouterr()

    repaired = VideoIndex(folder, embed_model=index.embed_model)
    try:
        assert LexicalStore(folder).outdated() == []
        generation = repaired.lexical.generation()
        assert repaired.lexical.snapshot().frequencies["maria"] == 1
        (hit,) = repaired.search('"Maria"', top_k=3)
        assert MARIA[0] - 1.0 <= hit.start <= MARIA[1]
        # read again once: ingesting again (its clean-up checks the words) changes nothing
        assert repaired.ingest([audio]).ok
        assert repaired.lexical.generation() == generation
    finally:
        repaired.close()
    with sqlite3.connect(words_file) as db:
        (read,) = db.execute("SELECT value FROM meta WHERE key = 'tokens'").fetchone()
        stored = " ".join(text for (text,) in db.execute("SELECT words FROM words"))
    assert read == TOKENS
    assert " maria budget " in f" {stored} " and "marias" not in stored
