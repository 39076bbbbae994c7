"""The lexical index of an index folder: persistence, updates, phrases, repair."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from llama_index.core.schema import TextNode

from llama_index_video import schema
from llama_index_video.store.lexical import LexicalStore, check_lexical, repair_lexical
from llama_index_video.store.tokens import words


def _node(node_id: str, text: str, content: str = "c1", modality: str = "transcript", **meta):
    metadata = {schema.CONTENT_HASH: content, schema.MODALITY: modality, **meta}
    return TextNode(id_=node_id, text=text, metadata=metadata)


def _filler(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    vocabulary = ["budget", "meeting", "agenda", "review", "the", "team", "plan", "sales"]
    return [" ".join(rng.choice(vocabulary) for _ in range(30)) for _ in range(count)]


def test_a_word_said_once_among_many_units_ranks_first(tmp_path):
    store = LexicalStore(tmp_path)
    nodes = [_node(f"n{i:04d}", text) for i, text in enumerate(_filler(500))]
    nodes[317] = _node("n0317", "practice moves to Thursdays in Reykjavik from now on")
    store.add(nodes)
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    hits = snapshot.search(words("When is practice in Reykjavik?"), top_k=5)
    assert hits[0].node_id == "n0317"
    assert hits[0].score == pytest.approx(1.0)  # every query word, as well as any node
    assert all(0 < h.score <= 1 for h in hits)
    assert snapshot.search(words("what is the"), top_k=5) == []  # stop words only


def test_persisted_and_loaded_by_another_store(tmp_path):
    LexicalStore(tmp_path).add([_node("a", "the gym floor is wet"), _node("b", "budget")])
    writer = LexicalStore(tmp_path)
    writer.refresh()
    snapshot = LexicalStore(tmp_path).snapshot()  # another process's view: from disk
    assert snapshot is not None
    assert [h.node_id for h in snapshot.search(["gym"], top_k=3)] == ["a"]


def test_updates_rebuild_only_when_words_changed(tmp_path):
    store = LexicalStore(tmp_path)
    store.add([_node("a", "alpha words", content="c1"), _node("b", "beta words", content="c2")])
    assert store.refresh() is True
    assert store.refresh() is False  # nothing changed
    assert store.refresh(force=False) is False  # within REFRESH_SECONDS
    store.delete_content("c1")
    store.add([_node("c", "gamma words", content="c3")])
    assert store.refresh() is True
    snapshot = store.snapshot()
    assert snapshot is not None
    assert sorted(snapshot.ids) == ["b", "c"]
    assert snapshot.search(["alpha"], top_k=3) == []
    assert store.counts() == {"c2": 1, "c3": 1}


def test_quoted_phrases_match_runs_of_whole_words_only(tmp_path):
    store = LexicalStore(tmp_path)
    store.add(
        [
            _node("exact", "Meet on the Gym-Floor at nine"),
            _node("apart", "the floor of the gym is new"),
            _node("plural", "two gym floors"),
            _node("both", "gym floor and the budget review"),
        ]
    )
    assert store.with_phrases([["gym", "floor"]]) == {"exact", "both"}
    assert store.with_phrases([["gym", "floor"], ["budget", "review"]]) == {"both"}
    assert store.with_phrases([["floor", "gym"]]) == set()


def test_filters_by_modality_speaker_and_ids(tmp_path):
    store = LexicalStore(tmp_path)
    store.add(
        [
            _node("t1", "ozone layer", speaker="SPEAKER_1"),
            _node("t2", "ozone hole", speaker="SPEAKER_2"),
            _node("o1", "OZONE", modality="ocr"),
        ]
    )
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    found = {h.node_id for h in snapshot.search(["ozone"], top_k=5, modalities=["ocr"])}
    assert found == {"o1"}
    found = {h.node_id for h in snapshot.search(["ozone"], top_k=5, speakers=["SPEAKER_2"])}
    assert found == {"t2"}
    assert [h.node_id for h in snapshot.search(["ozone"], top_k=5, only={"t1"})] == ["t1"]


def test_nodes_without_words_and_an_empty_index_are_valid(tmp_path):
    store = LexicalStore(tmp_path)
    store.add([_node("frame", "", modality="frame")])
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None and snapshot.search(["anything"], top_k=3) == []
    store.delete_content("c1")
    store.refresh()
    empty = store.snapshot()
    assert empty is not None and empty.ids == [] and empty.search(["x"], top_k=1) == []


def test_check_and_repair_against_what_is_indexed(tmp_path):
    store = LexicalStore(tmp_path)
    store.add([_node("a1", "alpha", content="A"), _node("s1", "stray", content="S")])
    stored = {"A": [_node("a1", "alpha", content="A")], "B": [_node("b1", "beta", content="B")]}
    check = check_lexical(store, {"A": 1, "B": 1})
    assert (check.missing, check.stray, check.stale, check.ok) == (["B"], ["S"], True, False)
    assert "1 file(s) missing" in str(check)
    repair_lexical(store, check, lambda key: stored[key])
    assert check_lexical(store, {"A": 1, "B": 1}).ok
    snapshot = store.snapshot()
    assert snapshot is not None
    assert [h.node_id for h in snapshot.search(["beta"], top_k=2)] == ["b1"]


def test_phrases_are_looked_for_among_the_nodes_holding_their_words(tmp_path):
    store = LexicalStore(tmp_path)
    store.add([_node(f"n{i}", text) for i, text in enumerate(_filler(50))])
    store.add([_node("target", "the gym floor"), _node("apart", "floor gym")])
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    holding = snapshot.holding(["the", "gym", "floor"])
    assert holding == {"target", "apart"}
    assert snapshot.holding(["the"]) is None  # stop words only: any node might
    assert snapshot.holding(["gym", "nowhere"]) == set()
    assert store.with_phrases([["gym", "floor"]], among=holding) == {"target"}
    assert store.with_phrases([["gym", "floor"]], among=set()) == set()


def test_text_in_any_script_is_indexed_and_found(tmp_path):
    store = LexicalStore(tmp_path)
    store.add(
        [
            _node("ja", "東京は日本の首都です"),
            _node("ru", "Встреча в четверг в Рейкьявике"),
            _node("ar", "الاجتماع يوم الخميس"),
            _node("emoji", "🎉🎉"),
        ]
    )
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    assert snapshot.search(words("首都"), top_k=2)[0].node_id == "ja"
    assert snapshot.search(words("РЕЙКЬЯВИКЕ"), top_k=2)[0].node_id == "ru"
    assert snapshot.search(words("الخميس"), top_k=2)[0].node_id == "ar"


def test_read_after_a_writer_killed_mid_transaction(tmp_path):
    """A writer killed inside a transaction leaves a hot journal; a read-only connection
    may not roll it back ("attempt to write a readonly database"), so a re-ingest after
    a kill -9 failed with "read-only here" before it wrote anything."""
    store = LexicalStore(tmp_path)
    store.add([_node(f"n{i:04d}", text) for i, text in enumerate(_filler(300))])
    writer = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "db.execute('PRAGMA cache_size=1')\n"
        "db.execute('BEGIN')\n"
        "db.execute(\"UPDATE words SET words = words || ' extra'\")\n"
        "print('writing', flush=True)\n"
        "time.sleep(60)\n"
    )
    killed = subprocess.Popen(
        [sys.executable, "-c", writer, str(store.db_file)], stdout=subprocess.PIPE, text=True
    )
    assert killed.stdout is not None and killed.stdout.readline() == "writing\n"
    killed.kill()
    killed.wait(timeout=30)
    assert store.db_file.with_name(f"{store.db_file.name}-journal").exists()

    assert LexicalStore(tmp_path).counts() == {"c1": 300}
    assert not store.db_file.with_name(f"{store.db_file.name}-journal").exists()
