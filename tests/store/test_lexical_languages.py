"""The lexical index's language column: filtered before ranking, and old indexes.

A search in one language is answered by the matrices (as a speaker filter is), so a
rare language among many better matches of another costs one read of ``top_k`` rows,
not a read of every better match. An index written before the column still answers
filtered searches rightly (a row of unknown language is checked on its stored row), and
its repair reads the words of such rows again.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

from llama_index.core.schema import TextNode

from llama_index_video import schema
from llama_index_video.search.lexical import LexicalRetriever
from llama_index_video.store.lexical import LexicalStore, check_lexical, repair_lexical
from tests_support import lexical_without_languages

ENGLISH = 2_000
FRENCH = 3
TOP_K = 3


def _node(node_id: str, text: str, *, content: str, **meta: str) -> TextNode:
    metadata = {schema.CONTENT_HASH: content, schema.MODALITY: "transcript", **meta}
    return TextNode(id_=node_id, text=text, metadata=metadata)


def _nodes() -> list[TextNode]:
    """Many English units naming Reykjavik twice, a few French ones naming it once in
    longer text (so every English unit outranks every French one), and a frame."""
    english = [
        _node(f"en{i:05d}", f"Reykjavik Reykjavik harbour {i}", content="en", language="en")
        for i in range(ENGLISH)
    ]
    french = [
        _node(
            f"fr{i}",
            f"nous avons pris le bateau du port de Reykjavik le matin numéro {i}",
            content="fr",
            language="fr",
        )
        for i in range(FRENCH)
    ]
    frame = TextNode(
        id_="frame",
        text="Reykjavik",
        metadata={schema.CONTENT_HASH: "en", schema.MODALITY: "ocr"},
    )
    return [*english, *french, frame]


class _Rows:
    """The stored nodes by id, counting how many are read."""

    def __init__(self, nodes: list[TextNode]) -> None:
        self.nodes = {node.node_id: node for node in nodes}
        self.read = 0

    def __call__(self, ids: list[str]) -> list[TextNode]:
        self.read += len(ids)
        return [self.nodes[i] for i in ids if i in self.nodes]


class _Query:
    def __init__(self, text: str) -> None:
        self.query_str = text
        self.embedding = None


def _store(tmp_path) -> tuple[LexicalStore, _Rows]:
    nodes = _nodes()
    store = LexicalStore(tmp_path)
    store.add(nodes)
    store.refresh()
    return store, _Rows(nodes)


def _retrieve(store: LexicalStore, rows: _Rows, languages: list[str] | None) -> list[str]:
    retriever = LexicalRetriever(store, rows, top_k=TOP_K, languages=languages)
    return [hit.node.node_id for hit in retriever.retrieve(_Query("Reykjavik harbour"))]


def test_a_rare_language_is_found_reading_only_its_top_k_rows(tmp_path):
    store, rows = _store(tmp_path)
    assert all(i.startswith("en") for i in _retrieve(store, rows, None))  # better matches
    rows.read = 0
    assert sorted(_retrieve(store, rows, ["fr"])) == [f"fr{i}" for i in range(FRENCH)]
    assert rows.read == TOP_K  # main read the 2,000 English rows first, 3 at a time
    snapshot = store.snapshot()
    assert snapshot is not None and not snapshot.unlabelled
    both = snapshot.search(["reykjavik"], top_k=ENGLISH + 10, languages=["en", "fr"])
    assert len(both) == ENGLISH + FRENCH  # the frame is in no language
    assert snapshot.search(["reykjavik"], top_k=5, languages=["ja"]) == []


def test_an_index_written_before_languages_answers_rightly_and_is_repaired(tmp_path, caplog):
    _, rows = _store(tmp_path)
    lexical_without_languages(tmp_path)
    old = LexicalStore(tmp_path)
    snapshot = old.snapshot()
    assert snapshot is not None and snapshot.unlabelled
    _retrieve(old, rows, None)
    assert "without their language" not in caplog.text  # said to searches by language
    rows.read = 0
    found = _retrieve(old, rows, ["fr"])  # no English hit, whatever it ranks first
    assert all(i.startswith("fr") for i in found) and rows.read == TOP_K
    _retrieve(old, rows, ["en"])
    warned = [r for r in caplog.records if "recorded without their language" in r.message]
    assert len(warned) == 1 and "verify --repair" in warned[0].message  # once
    indexed = {"en": ENGLISH + 1, "fr": FRENCH}
    check = check_lexical(old, indexed)
    assert check.unlabelled == ["en", "fr"] and not check.missing and not check.ok
    assert "2 file(s) recorded without their language" in str(check)

    old.add([rows.nodes["fr0"]])  # a write adds the column; the other rows stay unknown
    assert old.unlabelled() == ["en", "fr"]
    with closing(sqlite3.connect(old.db_file)) as db:
        assert db.execute("SELECT language FROM words WHERE node_id = 'fr0'").fetchone() == ("fr",)

    def nodes_of(key: str) -> list[TextNode]:
        return [n for n in rows.nodes.values() if n.metadata[schema.CONTENT_HASH] == key]

    repair_lexical(old, check_lexical(old, indexed), nodes_of)
    assert check_lexical(old, indexed).ok and old.unlabelled() == []
    repaired = old.snapshot()
    assert repaired is not None and not repaired.unlabelled
    rows.read = 0
    assert sorted(_retrieve(old, rows, ["fr"])) == [f"fr{i}" for i in range(FRENCH)]
    assert rows.read == TOP_K
    built = old.folder / f"bm25-{old.built_generation()}" / "nodes.json"
    languages = json.loads(built.read_text())["languages"]
    assert languages.count("fr") == FRENCH and languages.count("") == 1  # the frame
