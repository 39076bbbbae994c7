"""The index folder's lexical index: exact words, numbers and phrases, scored by BM25.

Dense vectors find paraphrases but blur a rare word (a name, a number, a product term
said once in an hour) into its unit's meaning. This module keeps, beside the vector
store, what finds such a word again: every stored node's words, and a BM25 index over
them built by ``bm25s`` (a maintained implementation on sparse matrices, numpy only).

Layout, in ``<index folder>/lexical/``:

- ``words.sqlite``: one row per node in the vector store (node id, content hash,
  modality, speaker, language, and its text as
  :func:`~llama_index_video.store.tokens.words` reads it, joined by spaces), and a
  *generation* counter raised by every change. The language is ``""`` for a moment
  heard in none (a frame, a document) and NULL in rows recorded before languages were:
  the first write adds the column, :func:`check_lexical` names the contents with such
  rows, and :func:`repair_lexical` (``verify --repair``, and every ``ingest``'s
  clean-up, under the writer lock) reads their words again from the vector store; so
  too the words of an index read by another version of the tokens (``meta``'s
  ``tokens`` is not :data:`~llama_index_video.store.tokens.TOKENS`: "marias" where
  they now read "maria"), once: the repair records today's version. Until then a
  search reads the old words (a bare "Maria" misses a stored "marias") and says so
  once per generation of the matrices.
  Ingest adds a file's rows with its vectors and deletes them with its vectors, so it
  is in step with the store; phrases are matched here (a quoted phrase is a run of
  whole words, found with ``instr``).
- ``bm25-<generation>/``: the BM25 matrices (``bm25s`` ``save``/``load``) of that
  generation and their node ids; ``current`` names the newest complete one (written
  last, replaced atomically), so a reader never loads a half-written index.

All of it is derived data: a damaged ``words.sqlite`` (not a database, malformed, its
tables gone) is found by :func:`check_lexical`, and :func:`repair_lexical` (``verify
--repair``, and the clean-up every ``ingest`` starts with) deletes the folder and reads
the words again from the vector store's rows, as for an index that never had one.

Why rebuild the matrices rather than update them: ``bm25s`` has no incremental add,
and BM25 scores depend on statistics of the whole collection (document frequencies,
mean length), so per-run segments would score on different scales. Why from
``words.sqlite`` rather than from the vector store's texts: reading 100,000 documents
back from a Chroma collection alone took 14-16 s here, before any tokenising, and not
every LlamaIndex store can list its rows. Measured with ``benchmarks/lexical_rebuild.py``
on 2 cores shared with other work (load 9-13, so slower than a quiet machine): a
rebuild takes 2.5-5 s for 10,000 units and 26-67 s for 100,000 (some 500 hours of
speech); recording the words as ingest goes, 0.2-0.5 ms per unit; a search 0.7 and 6 ms,
a quoted phrase 0.1 and 1.3 ms more. So writers rebuild once at the end of an ingest
run, a removal or a repair, and during a long run at most once a minute
(:meth:`LexicalStore.refresh`), never once per file. Readers load the newest complete
matrices; a node added since is found by its vectors until the next rebuild, and a
node removed since is dropped by the search's visibility check.

What a node's words are (tokens, stop words) is :mod:`llama_index_video.store.tokens`;
the matrices of one generation, and searching them, :mod:`llama_index_video.store.bm25`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video import schema
from llama_index_video.errors import IndexCorruptError
from llama_index_video.store.bm25 import LexicalSnapshot, build_matrices
from llama_index_video.store.storage_errors import translated
from llama_index_video.store.tokens import TOKENS, words

if TYPE_CHECKING:
    from llama_index.core.schema import BaseNode

logger = logging.getLogger(__name__)

LEXICAL_FOLDER = "lexical"
WORDS_FILE = "words.sqlite"
CURRENT_FILE = "current"
REFRESH_SECONDS = 60.0
"""During a run, the matrices are rebuilt at most this often (see the module docstring)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS words (
    node_id TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    modality TEXT NOT NULL,
    speaker TEXT NOT NULL,
    words TEXT NOT NULL,
    language TEXT
);
CREATE INDEX IF NOT EXISTS words_by_content ON words (content_hash);
"""


@dataclass(frozen=True)
class WordsRow:
    """One node as the lexical index keeps it."""

    node_id: str
    content_hash: str
    modality: str
    speaker: str
    language: str  # "": heard in none (a frame, a document)
    words: str  # tokens joined by single spaces

    @classmethod
    def of(cls, node: BaseNode) -> WordsRow:
        meta = node.metadata
        return cls(
            node.node_id,
            str(meta.get(schema.CONTENT_HASH, "")),
            str(meta.get(schema.MODALITY, "")),
            str(meta.get(schema.SPEAKER) or ""),
            str(meta.get(schema.LANGUAGE) or ""),
            " ".join(words(node.get_content())),
        )


class LexicalStore:
    """The words of an index folder's nodes and their BM25 matrices (module docstring).

    Args:
        folder: The index folder (``lexical/`` is made inside it on first write).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder) / LEXICAL_FOLDER
        self.db_file = self.folder / WORDS_FILE
        self._refreshed = time.monotonic()
        self._snapshot: LexicalSnapshot | None = None
        self._warned: int | None = None  # the generation warn_unlabelled spoke of

    # --- writing (the caller holds the index's writer lock) ---

    def add(self, nodes: Iterable[BaseNode]) -> None:
        """Record the words of ``nodes`` (replacing rows of the same ids)."""
        rows = [WordsRow.of(node) for node in nodes]
        if not rows:
            return
        with self._writing() as db:
            db.executemany(
                "INSERT OR REPLACE INTO words (node_id, content_hash, modality, speaker, "
                "language, words) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (r.node_id, r.content_hash, r.modality, r.speaker, r.language, r.words)
                    for r in rows
                ],
            )

    def delete_content(self, content_hash: str) -> None:
        """Forget the words of every node of one content."""
        if not self.db_file.exists():
            return
        with self._writing() as db:
            db.execute("DELETE FROM words WHERE content_hash = ?", (content_hash,))

    def discard(self) -> None:
        """Delete the whole lexical index (words and matrices), to be built again."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self._snapshot = None

    def replace_all(self, nodes: Iterable[BaseNode]) -> int:
        """Forget every row and record ``nodes`` instead (a repair); returns the count."""
        with self._writing() as db:
            db.execute("DELETE FROM words")
        count = 0
        batch: list[BaseNode] = []
        for node in nodes:
            batch.append(node)
            if len(batch) >= 512:
                self.add(batch)
                count, batch = count + len(batch), []
        self.add(batch)
        return count + len(batch)

    def refresh(self, *, force: bool = True) -> bool:
        """Rebuild the BM25 matrices if the words changed since they were built.

        Args:
            force: Rebuild now; False: only if ``REFRESH_SECONDS`` passed since the last.

        Returns:
            Whether it rebuilt them.
        """
        if not force and time.monotonic() - self._refreshed < REFRESH_SECONDS:
            return False
        self._refreshed = time.monotonic()
        if not self.db_file.exists():
            return False
        generation = self.generation()
        if self.built_generation() == generation:
            return False
        started = time.perf_counter()
        rows = list(self._rows())
        target = self.folder / f"bm25-{generation}"
        shutil.rmtree(target, ignore_errors=True)
        with translated(target):
            build_matrices(rows).save(target, ids=[r[0] for r in rows])
            _write_atomically(self.folder / CURRENT_FILE, json.dumps({"generation": generation}))
        for old in self.folder.glob("bm25-*"):
            if old != target:
                shutil.rmtree(old, ignore_errors=True)
        logger.info(
            "lexical index of %d nodes rebuilt in %.2f s", len(rows), time.perf_counter() - started
        )
        return True

    # --- reading ---

    def generation(self) -> int:
        """How many changes the words have had (0: never written)."""
        if not self.db_file.exists():
            return 0
        with self._reading() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def built_generation(self) -> int | None:
        """The generation of the newest complete matrices; None: none built."""
        try:
            return int(json.loads((self.folder / CURRENT_FILE).read_text())["generation"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def counts(self) -> dict[str, int]:
        """Rows per content hash (what ``verify`` compares with the manifest)."""
        if not self.db_file.exists():
            return {}
        with self._reading() as db:
            found = db.execute("SELECT content_hash, count(*) FROM words GROUP BY content_hash")
            return {key: int(n) for key, n in found}

    def snapshot(self) -> LexicalSnapshot | None:
        """The newest complete matrices, loaded once per generation; None if none."""
        generation = self.built_generation()
        if generation is None:
            return None
        if self._snapshot is None or self._snapshot.generation != generation:
            try:
                self._snapshot = LexicalSnapshot.load(
                    self.folder / f"bm25-{generation}", generation
                )
            except (OSError, ValueError) as exc:  # replaced by a writer while loading
                logger.info("lexical index not readable now (%s); searching without it", exc)
                return None
            if self.outdated():
                logger.warning(
                    "%s: the words of some moments were read by an older version, so a "
                    "search may miss them by their exact words until `llama-index-video "
                    "verify --repair` (or the next ingest) reads them again",
                    self.folder,
                )
        return self._snapshot

    def warn_unlabelled(self, snapshot: LexicalSnapshot) -> None:
        """Say once per generation, before a search by language, that some of
        ``snapshot``'s moments were recorded without their language."""
        if snapshot.unlabelled and self._warned != snapshot.generation:
            self._warned = snapshot.generation
            logger.warning(
                "%s: some moments were recorded without their language, so a search in "
                "some languages may find fewer of them by their words until "
                "`llama-index-video verify --repair` (or the next ingest) records it",
                self.folder,
            )

    def with_phrases(
        self, phrases: Sequence[Sequence[str]], among: Collection[str] | None = None
    ) -> set[str]:
        """Ids of the nodes whose words contain every phrase, each as a run of words.

        Args:
            phrases: The phrases' words.
            among: Only look at these nodes (e.g. those
                :meth:`~llama_index_video.store.bm25.LexicalSnapshot.holding` finds);
                None: at every node.
        """
        if not self.db_file.exists() or not phrases:
            return set()
        clauses = " AND ".join("instr(' ' || words || ' ', ?) > 0" for _ in phrases)
        needles = [f" {' '.join(p)} " for p in phrases]
        with self._reading() as db:
            if among is None:
                found = db.execute(f"SELECT node_id FROM words WHERE {clauses}", needles)
                return {row[0] for row in found}
            ids, kept = sorted(among), set[str]()
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found = db.execute(
                    f"SELECT node_id FROM words WHERE node_id IN ({marks}) AND {clauses}",
                    [*chunk, *needles],
                )
                kept.update(row[0] for row in found)
            return kept

    def outdated(self) -> list[str]:
        """The contents (hashes) whose words another version of the tokens read."""
        if not self.db_file.exists():
            return []
        with self._reading() as db:
            read = db.execute("SELECT value FROM meta WHERE key = 'tokens'").fetchone()
            if read is not None and read[0] == TOKENS:
                return []
            return sorted(row[0] for row in db.execute("SELECT DISTINCT content_hash FROM words"))

    def mark_tokens(self) -> None:
        """Record that every stored row's words are read by today's tokens."""
        with self._writing() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tokens', ?)", (TOKENS,))

    def unlabelled(self) -> list[str]:
        """The contents (hashes) with rows recorded before languages were."""
        if not self.db_file.exists():
            return []
        with self._reading() as db:
            if not _has_languages(db):
                found = db.execute("SELECT DISTINCT content_hash FROM words")
            else:
                found = db.execute("SELECT DISTINCT content_hash FROM words WHERE language IS NULL")
            return sorted(row[0] for row in found)

    def nodes_of(self, contents: Collection[str]) -> set[str]:
        """Ids of the nodes of these contents (content hashes)."""
        if not self.db_file.exists() or not contents:
            return set()
        marks = ",".join("?" * len(contents))
        with self._reading() as db:
            found = db.execute(
                f"SELECT node_id FROM words WHERE content_hash IN ({marks})", sorted(contents)
            )
            return {row[0] for row in found}

    def _rows(self) -> Iterator[tuple[str, str, str, str | None, str]]:
        with self._reading() as db:
            language = "language" if _has_languages(db) else "NULL"
            yield from db.execute(
                f"SELECT node_id, modality, speaker, {language}, words FROM words ORDER BY node_id"
            )

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with translated(self.db_file), closing(sqlite3.connect(self.db_file)) as db:
            # Rows lost to a power cut are found by `verify` and rebuilt by its repair.
            db.executescript("PRAGMA synchronous=NORMAL;" + _SCHEMA)
            if not _has_languages(db):  # written before languages were: NULL in its rows
                db.execute("ALTER TABLE words ADD COLUMN language TEXT")
            with db:
                if db.execute("SELECT 1 FROM words LIMIT 1").fetchone() is None:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('tokens', ?)", (TOKENS,))
                yield db
                db.execute(
                    "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) "
                    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        uri = f"{self.db_file.absolute().as_uri()}?mode=ro"
        with translated(self.db_file):
            db = sqlite3.connect(uri, uri=True)
            try:
                db.execute("PRAGMA schema_version").fetchone()
            except sqlite3.OperationalError as exc:
                db.close()
                if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_ROLLBACK":
                    raise
                # A writer killed mid-transaction left a hot journal, which a read-only
                # connection may not roll back: a writable one does so on its first read.
                with closing(sqlite3.connect(self.db_file)) as recovering:
                    recovering.execute("PRAGMA schema_version").fetchone()
                db = sqlite3.connect(uri, uri=True)
            with closing(db):
                yield db


@dataclass(frozen=True)
class LexicalCheck:
    """Does the lexical index hold the words of what the manifest lists as indexed?"""

    missing: list[str]  # indexed contents with fewer (or more) rows than their moments
    stray: list[str]  # contents with rows that are not indexed
    stale: bool  # the matrices were built before the last change of the words
    damaged: str = ""  # why words.sqlite cannot be read ("": it can)
    unlabelled: list[str] = field(default_factory=list)  # indexed, rows without languages
    outdated: list[str] = field(default_factory=list)  # indexed, read by other tokens

    @property
    def ok(self) -> bool:
        return not (
            self.missing
            or self.stray
            or self.stale
            or self.damaged
            or self.unlabelled
            or self.outdated
        )

    def __str__(self) -> str:
        if self.damaged:
            return f"damaged ({self.damaged})"
        problems = [
            f"{len(self.missing)} file(s) missing or incomplete" if self.missing else "",
            f"{len(self.stray)} file(s) not indexed" if self.stray else "",
            f"{len(self.unlabelled)} file(s) recorded without their language"
            if self.unlabelled
            else "",
            f"{len(self.outdated)} file(s) whose words an older version read"
            if self.outdated
            else "",
            "built before the last change" if self.stale else "",
        ]
        return "; ".join(p for p in problems if p) or "ok"


def check_lexical(
    lexical: LexicalStore, indexed: dict[str, int], *, removing: Collection[str] = ()
) -> LexicalCheck:
    """Compare the lexical index with ``indexed`` (content hash -> moments stored); a
    ``words.sqlite`` that cannot be read is damaged, and every indexed content missing.
    The words of contents ``removing`` (forgotten, their words deleted in a writer's
    commit step) are not stray."""
    try:
        counts = lexical.counts()
        built = lexical.built_generation()
        generation = lexical.generation()
        unlabelled = lexical.unlabelled()
        outdated = lexical.outdated()
    except IndexCorruptError as exc:
        reason = str(exc).removeprefix(f"{lexical.db_file}: ").split(";")[0]
        return LexicalCheck(missing=sorted(indexed), stray=[], stale=True, damaged=reason)
    missing = sorted(key for key, n in indexed.items() if counts.get(key, 0) != n)
    return LexicalCheck(
        missing=missing,
        stray=sorted(set(counts) - set(indexed) - set(removing)),
        stale=bool(counts) and built != generation,
        unlabelled=sorted(set(unlabelled) & set(indexed) - set(missing)),
        outdated=sorted(set(outdated) & set(indexed)),
    )


def repair_lexical(
    lexical: LexicalStore, check: LexicalCheck, nodes_of: Callable[[str], list[BaseNode]]
) -> None:
    """Make the lexical index match the store: forget stray contents, read the words
    of the missing ones, of those recorded without their language and of those another
    version of the tokens read from their stored nodes (``nodes_of(content_hash)``),
    rebuild. A damaged index is deleted first, and built again from every indexed
    content."""
    if check.damaged:
        logger.warning("lexical index damaged (%s); building it again", check.damaged)
        lexical.discard()
    if check.unlabelled:
        logger.warning(
            "lexical index: %d file(s) recorded without their language; reading their "
            "words again from the vector store",
            len(check.unlabelled),
        )
    for key in check.stray:
        lexical.delete_content(key)
    if check.outdated:
        logger.warning(
            "lexical index: %d file(s) whose words an older version read; reading them "
            "again from the vector store",
            len(check.outdated),
        )
    for key in dict.fromkeys([*check.missing, *check.unlabelled, *check.outdated]):
        lexical.delete_content(key)
        lexical.add(nodes_of(key))
    if check.outdated:
        lexical.mark_tokens()
    lexical.refresh()


def _has_languages(db: sqlite3.Connection) -> bool:
    """Whether ``words`` has its language column (added after it was first written)."""
    return any(column[1] == "language" for column in db.execute("PRAGMA table_info(words)"))


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)
