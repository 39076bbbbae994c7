"""Fault injection: ``kill -9`` at the write points of ``ingest``, export (``clip``, ``ask
--export``), ``remove`` and ``verify --repair``, and damaged manifest, vector and lexical
files; what each leaves behind.

A *write point* is a call of the command that changes something on disk; the
command is killed just before one in a child process (``benchmarks/kill_points.py``
says how), before the first call of every distinct site and at evenly spaced points in
between, up to ``--points`` runs, each on a fresh copy of the same folder. After each kill:

- ``ingest`` of new files (two recordings read from their subtitles, one with frames,
  one long enough for chapters, and a Markdown file: manifest, vectors, lexical index,
  frames, chapters, relink) and ``ingest`` of a changed file (its old rows replaced):
  the same ``ingest`` run again finishes the job and then the index verifies, holds
  exactly the rows of an uninterrupted run (nothing twice), search finds every file,
  and no row of a replaced file's old version is left;
- export (``clip``: copy, re-encode with burned subtitles, audio; ``ask --export``): the
  recording is unchanged, and the output's name holds nothing or a complete file;
- ``remove``: a reader's search works at once (one line if it cannot), and after
  ``verify --repair`` the index verifies, the other files are found and the removed
  one is wholly there or wholly gone;
- ``verify --repair`` of an index whose vectors, lexical index or manifest were lost:
  the next ``verify --repair`` finishes the job: every file found, as many rows as
  before;
- ``verify --repair`` making the chapters of an index built without them: the next
  ``verify --repair`` finishes, with the rows of an uninterrupted repair.

Damaged files (no kill): each of :data:`DAMAGE` is applied to a fresh copy; ``search``,
``verify --repair`` and ``verify`` run through the CLI. A case is clean when no command
ends in a traceback (exit 70) or says more than one line on error, and the last
``verify`` exits 0 or the damage was named in one line with the way out.

Usage: ``python benchmarks/fault_injection.py [--points 12] [--only ingest,export,...]``
(a few minutes per scenario on 2 shared cores). Synthetic material: the example media
(espeak-ng voices), a silent 200 s recording with made-up subtitles, and Markdown files.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.kill_points import (  # noqa: E402
    Tally,
    cleared,
    cli,
    digest,
    here,
    kill_everywhere,
    one_line,
)

EXAMPLES = ROOT / "examples" / "media"


def media_index(work: Path) -> Path:
    """A folder ``src/`` with the two example recordings and ``idx/`` indexing them."""
    base = work / "media-base"
    (base / "src").mkdir(parents=True)
    for name in ("checkout_deep_dive.mp4", "team_sync.mp3"):
        shutil.copy(EXAMPLES / name, base / "src" / name)
    done = cli("ingest", "src", "--index", "idx", "--no-frames", "--quiet", cwd=base)
    if done.returncode != 0:
        raise RuntimeError(f"ingest failed: {done.stderr[-600:]}")
    return base


EXPORTS = {
    "clip, copied (mp4)": (
        ["clip", "checkout_deep_dive.mp4", "--from", "10", "--to", "20", "-o"],
        ".mp4",
    ),
    "clip, burned subtitles (mp4)": (
        [
            "clip",
            "checkout_deep_dive.mp4",
            "--from",
            "12.3",
            "--to",
            "18",
            "--burn-subtitles",
            "-o",
        ],
        ".mp4",
    ),
    "clip, audio (mp3)": (
        ["clip", "team_sync.mp3", "--from", "5", "--to", "15", "--reencode", "-o"],
        ".mp3",
    ),
    "ask --export (mp4)": (
        ["ask", "checkout service latency", "--llm", "none", "--export"],
        ".mp4",
    ),
}
"""Per export: its command line up to the output file, and the output's suffix."""


def export_scenarios(work: Path, budget: int, only: set[str] | None = None) -> Iterator[Tally]:
    base = media_index(work)
    sources = {p.name: digest(p) for p in (base / "src").iterdir()}
    for name, (args, suffix) in EXPORTS.items():
        if only is not None and args[0] not in only:
            continue
        output = Path("out") / f"moment{suffix}"
        tally = Tally(name)

        def setup(folder: Path) -> None:
            shutil.copytree(base, folder)
            (folder / "out").mkdir()

        def check(folder: Path, at: int, output: Path = output, tally: Tally = tally) -> str | None:
            for source, was in sources.items():
                if digest(folder / "src" / source) != was:
                    return f"{source} changed"
            final = folder / output
            tally.leftovers += sum(1 for p in (folder / "out").iterdir() if p != final)
            if final.exists() and not _complete(final):
                return "an incomplete file under the output's name"
            return None

        argv: list[str | Path] = [*args, output, "--index", "idx"]
        yield kill_everywhere(tally, argv, setup, check, work=work, budget=budget)


def _complete(path: Path) -> bool:
    import av

    try:
        with av.open(str(path)) as container:
            return all(stream.duration for stream in container.streams)
    except (av.FFmpegError, OSError):
        return False


TEXTS = {
    "boiler.md": "# Boiler\n\nThe boiler in hall seven is serviced every March by Kessler.\n",
    "roof.md": "# Roof\n\nThe north roof drains were cleared after the October storm.\n",
    "badges.md": "# Badges\n\nVisitor badges are printed at the east lobby desk.\n",
}
FOUND_BY = {
    "boiler.md": "Kessler boiler service",
    "roof.md": "roof drains storm",
    "badges.md": "visitor badges lobby",
}


def text_index(work: Path) -> Path:
    base = work / "text-base"
    (base / "src").mkdir(parents=True)
    for name, text in TEXTS.items():
        (base / "src" / name).write_text(text)
    done = here("ingest", "src", "--index", "idx", "--quiet", cwd=base)
    if done.returncode != 0:
        raise RuntimeError(f"ingest failed: {done.stderr[-600:]}")
    return base


def consistent(folder: Path, listed: set[str], rows: int | None = None) -> str | None:
    """After a writer was killed: ``verify --repair`` in this process, then every check
    of :func:`settled` (None: all held), and the index holds ``rows`` rows."""
    argv: list[str | Path] = ["verify", "--repair", "--index", "idx"]
    problem = settled(folder, argv, "repair", listed, FOUND_BY)
    if problem is None and rows is not None and _rows(folder / "idx") != rows:
        return f"{_rows(folder / 'idx')} rows, not {rows}"
    return problem


def settled(
    folder: Path, argv: list[str | Path], stage: str, listed: set[str], found_by: dict[str, str]
) -> str | None:
    """``argv`` (the command that should finish a killed one's job) run in this process,
    then every check (None: all held): it exits 0 in one line, the index verifies, lists
    at least the files ``listed`` (names), and finds each file it lists by its query in
    ``found_by``."""
    from llama_index_video.errors import VideoIndexError
    from llama_index_video.index import VideoIndex

    done = here(*argv, cwd=folder)
    if not one_line(done) or done.returncode != 0:
        return f"{stage} exit {done.returncode}: {done.stderr.strip()[-200:]}"
    try:
        index = VideoIndex(folder / "idx")
    except VideoIndexError as exc:
        return f"after {stage}: {exc}"
    try:
        check, _ = index.verify()
        if not check.ok:
            return f"verify after {stage} found problems"
        entries = index.library()
        missing = listed - {Path(entry.path or "").name for entry in entries}
        if missing:
            return f"lost {', '.join(sorted(missing))}"
        for entry in entries:
            name = Path(entry.path or "").name
            hits = index.search(found_by[name], top_k=10)
            if not any(hit.source.endswith(name) for hit in hits):
                return f"{name} listed but not found"
    except VideoIndexError as exc:
        return f"after {stage}: {exc}"
    finally:
        index.close()
    return None


def _rows(index: Path) -> int:
    with sqlite3.connect(index / "chroma" / "chroma.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def remove_scenario(work: Path, budget: int) -> Tally:
    base = text_index(work)

    def check(folder: Path, at: int) -> str | None:
        reader = here("search", FOUND_BY["roof.md"], "--index", "idx", "--json", cwd=folder)
        if not one_line(reader) or (reader.returncode == 0 and "roof.md" not in reader.stdout):
            return f"a reader right after: exit {reader.returncode} {reader.stderr[-200:]}"
        return consistent(folder, {"roof.md", "badges.md"})

    argv: list[str | Path] = ["remove", "src/boiler.md", "--index", "idx"]
    return kill_everywhere(
        Tally("remove"), argv, lambda f: shutil.copytree(base, f), check, work=work, budget=budget
    )


LOSSES: dict[str, Callable[[Path], None]] = {
    "vectors lost": lambda index: shutil.rmtree(index / "chroma"),
    "lexical damaged": lambda index: (index / "lexical" / "words.sqlite").write_bytes(b"x" * 4096),
    "manifest 0 bytes": lambda index: _zero_manifest(index),
}


def _zero_manifest(index: Path) -> None:
    for extra in ("manifest.sqlite-wal", "manifest.sqlite-shm"):
        (index / extra).unlink(missing_ok=True)
    (index / "manifest.sqlite").write_bytes(b"")


def repair_scenarios(work: Path, budget: int) -> Iterator[Tally]:
    base = text_index(work)
    rows = _rows(base / "idx")
    for name, lose in LOSSES.items():

        def setup(folder: Path, lose: Callable[[Path], None] = lose) -> None:
            shutil.copytree(base, folder)
            lose(folder / "idx")

        argv: list[str | Path] = ["verify", "--repair", "--index", "idx"]
        tally = Tally(f"verify --repair, {name}")
        check = lambda folder, at: consistent(folder, set(TEXTS), rows)  # noqa: E731
        yield kill_everywhere(tally, argv, setup, check, work=work, budget=budget)


PLANT_TOPICS = (
    "The forklift battery in bay {n} is charged overnight.",
    "The chiller in building {n} is descaled every spring.",
    "Sprinkler valve {n} is tested by the fire warden each quarter.",
    "The backup generator {n} runs for an hour on the first Friday.",
)
NEW_FILES = {
    "plant_tour.wav": "forklift battery charging overnight",
    "checkout_deep_dive.mp4": "checkout service latency peak",
    "pumps.md": "cooling pump seals leaks Monday",
}
"""The files the ``ingest`` scenario adds, and a query that finds each."""
CHANGED_ROOF = "# Roof\n\nThe north roof drains were replaced with wider steel pipes in May.\n"


def new_files(src: Path) -> None:
    """Into ``src``: a silent 200 s recording whose subtitles cover four topics (long
    enough for chapters), the checkout video with subtitles of its own (frames; neither
    needs speech recognition), and a Markdown file."""
    import wave

    from llama_index_video.media.export_subtitles import Cue, srt_text

    with wave.open(str(src / "plant_tour.wav"), "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(bytes(2 * 8000 * 200))
    cues = [Cue(n * 5.0, n * 5.0 + 4.5, PLANT_TOPICS[n // 10].format(n=n)) for n in range(40)]
    (src / "plant_tour.srt").write_text(srt_text(cues))
    shutil.copy(EXAMPLES / "checkout_deep_dive.mp4", src)
    checkout = [
        Cue(2.0, 9.0, "Welcome to the checkout service deep dive."),
        Cue(12.0, 20.0, "Checkout service latency rose to nine hundred milliseconds at peak."),
        Cue(30.0, 40.0, "The fix was a connection pool for the payment provider."),
    ]
    (src / "checkout_deep_dive.srt").write_text(srt_text(checkout))
    (src / "pumps.md").write_text(
        "# Pumps\n\nCooling pump seals are checked for leaks each Monday.\n"
    )


def ingest_scenarios(work: Path, budget: int) -> Iterator[Tally]:
    place = text_index(work)  # every run in the folder the index was made in
    saved = work / "text-saved"
    shutil.copytree(place, saved)
    argv: list[str | Path] = ["ingest", "src", "--index", "idx", "--ocr", "off", "--quiet"]

    def with_new(folder: Path) -> None:
        shutil.copytree(saved, folder)
        new_files(folder / "src")

    def with_changed(folder: Path) -> None:
        shutil.copytree(saved, folder)
        (folder / "src" / "roof.md").write_text(CHANGED_ROOF)

    scenarios = {
        "ingest, new files (frames, chapters)": (with_new, {**FOUND_BY, **NEW_FILES}, None),
        "ingest, a changed file": (with_changed, FOUND_BY, "October storm"),
    }
    for name, (setup, found_by, old_words) in scenarios.items():
        setup(cleared(place))
        done = here(*argv, cwd=place)
        if done.returncode != 0:
            raise RuntimeError(f"{name}: ingest failed: {done.stderr[-600:]}")
        rows = _rows(place / "idx")

        def check(
            folder: Path,
            at: int,
            found_by: dict[str, str] = found_by,
            rows: int = rows,
            old_words: str | None = old_words,
        ) -> str | None:
            return resumed(folder, argv, found_by, rows, old_words)

        tally = Tally(name)
        yield kill_everywhere(tally, argv, setup, check, work=work, budget=budget, place=place)


def resumed(
    folder: Path, argv: list[str | Path], found_by: dict[str, str], rows: int, old: str | None
) -> str | None:
    """After an ``ingest`` was killed: the same ``ingest`` again, then every check of
    :func:`settled` (None: all held) for the files of ``found_by``, and the index holds
    ``rows`` rows (an uninterrupted run's: nothing twice, nothing lost), none saying
    ``old`` (a replaced file's old words)."""
    problem = settled(folder, argv, "the next ingest", set(found_by), found_by)
    if problem is not None:
        return problem
    if _rows(folder / "idx") != rows:
        return f"{_rows(folder / 'idx')} rows, not {rows}"
    if old is not None and _documents_saying(folder / "idx", old):
        return f"{_documents_saying(folder / 'idx', old)} rows of the old version left"
    return None


def chapters_scenario(work: Path, budget: int) -> Tally:
    """``verify --repair`` making the chapters of recordings indexed without them (an
    index from before chapters: the files of :func:`new_files` ingested by a run whose
    chapter maker makes none). After a kill, the next ``verify --repair`` finishes: every
    check of :func:`settled`, the rows of an uninterrupted repair, and no long recording
    left without chapters."""
    from unittest import mock

    base = work / "old-base"
    (base / "src").mkdir(parents=True)
    new_files(base / "src")
    argv: list[str | Path] = ["verify", "--repair", "--index", "idx"]
    with mock.patch("llama_index_video.chapters.nodes.add_chapters", lambda *a, **k: []):
        done = here("ingest", "src", "--index", "idx", "--ocr", "off", "--quiet", cwd=base)
    if done.returncode != 0:
        raise RuntimeError(f"ingest without chapters failed: {done.stderr[-600:]}")
    whole = work / "uninterrupted"
    shutil.copytree(base, whole)
    if here(*argv, cwd=whole).returncode != 0 or _unchaptered(whole):
        raise RuntimeError("an uninterrupted repair made no chapters")
    rows = _rows(whole / "idx")

    def check(folder: Path, at: int) -> str | None:
        problem = settled(folder, argv, "the next repair", set(NEW_FILES), NEW_FILES)
        if problem is None and _rows(folder / "idx") != rows:
            return f"{_rows(folder / 'idx')} rows, not {rows}"
        if problem is None and _unchaptered(folder):
            return "a long recording still without chapters"
        return problem

    tally = Tally("verify --repair, chapters for an old index")
    return kill_everywhere(
        tally, argv, lambda f: shutil.copytree(base, f), check, work=work, budget=budget
    )


def _unchaptered(folder: Path) -> bool:
    """Whether ``verify`` finds long recordings without chapters in ``folder/idx``."""
    return "without chapters" in here("verify", "--index", "idx", cwd=folder).stdout


def _documents_saying(index: Path, words: str) -> int:
    with sqlite3.connect(index / "chroma" / "chroma.sqlite3") as db:
        query = (
            "SELECT count(*) FROM embedding_metadata "
            "WHERE key = 'chroma:document' AND string_value LIKE ?"
        )
        return int(db.execute(query, (f"%{words}%",)).fetchone()[0])


def _write(relative: str, data: bytes) -> Callable[[Path], None]:
    return lambda index: (index / relative).write_bytes(data)


def _sql(relative: str, script: str) -> Callable[[Path], None]:
    def run(index: Path) -> None:
        with sqlite3.connect(index / relative) as db:
            db.executescript(script)

    return run


def _segments(index: Path) -> list[Path]:
    return [p for p in (index / "chroma").iterdir() if p.is_dir()]


GARBAGE = b"not a database " * 300
DAMAGE: dict[str, Callable[[Path], None]] = {
    "manifest: 0 bytes": _zero_manifest,
    "manifest: garbage": _write("manifest.sqlite", GARBAGE),
    "manifest: tables dropped": _sql("manifest.sqlite", "DROP TABLE files; DROP TABLE paths;"),
    "manifest: rows deleted": _sql("manifest.sqlite", "DELETE FROM files; DELETE FROM paths;"),
    "vectors: chroma.sqlite3 0 bytes": _write("chroma/chroma.sqlite3", b""),
    "vectors: chroma.sqlite3 garbage": _write("chroma/chroma.sqlite3", GARBAGE),
    "vectors: chroma/ removed": lambda index: shutil.rmtree(index / "chroma"),
    "vectors: HNSW segment removed": lambda index: [shutil.rmtree(p) for p in _segments(index)],
    "lexical: words.sqlite 0 bytes": _write("lexical/words.sqlite", b""),
    "lexical: words.sqlite garbage": _write("lexical/words.sqlite", GARBAGE),
    "lexical: tables dropped": _sql("lexical/words.sqlite", "DROP TABLE words;"),
    "lexical: matrices removed": lambda index: [
        shutil.rmtree(p) for p in (index / "lexical").glob("bm25-*")
    ],
    "lexical: current garbage": _write("lexical/current", b"{not json"),
}


def damage_cases(work: Path) -> list[tuple[str, list[int], bool, str]]:
    """Per damage: the exits of search, verify --repair, verify; clean; the last line."""
    base = text_index(work)
    found = []
    for number, (name, damage) in enumerate(DAMAGE.items()):
        folder = work / f"damage-{number}"  # a new path: no Chroma of this process knows it
        shutil.copytree(base, folder)
        damage(folder / "idx")
        runs = [
            here("search", FOUND_BY["roof.md"], "--index", "idx", cwd=folder),
            here("verify", "--repair", "--index", "idx", cwd=folder),
            here("verify", "--index", "idx", cwd=folder),
        ]
        last = runs[-1]
        said = (last.stderr or last.stdout).strip().splitlines()[-1:] or [""]
        told = last.returncode == 2 and "restore" in last.stderr
        clean = all(one_line(run) for run in runs) and (last.returncode == 0 or told)
        found.append((name, [run.returncode for run in runs], clean, said[0][:110]))
        codes = ", ".join(str(run.returncode) for run in runs)
        print(f"| {name} | {codes} | {'yes' if clean else 'NO'} | {said[0][:110]} |", flush=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=12, help="kills per scenario (at least)")
    parser.add_argument("--only", default="ingest,export,ask,remove,repair,chapters,damage")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    started = time.perf_counter()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="faults-") as scratch:
        work = Path(scratch)
        if wanted & {"ingest", "export", "ask", "remove", "repair", "chapters"}:
            print("| command killed | write points | sites | killed | held | leftovers | failed |")
            print("|---|---:|---:|---:|---:|---:|---|", flush=True)
        for tally in ingest_scenarios(work / "ingest", args.points) if "ingest" in wanted else []:
            print(tally.row(), flush=True)
        if "remove" in wanted:
            print(remove_scenario(work / "remove", args.points).row(), flush=True)
        for tally in repair_scenarios(work / "repair", args.points) if "repair" in wanted else []:
            print(tally.row(), flush=True)
        if "chapters" in wanted:
            print(chapters_scenario(work / "chapters", args.points).row(), flush=True)
        exports = {"clip"} if "export" in wanted else set()
        exports |= {"ask"} if "ask" in wanted else set()
        for tally in export_scenarios(work / "export", args.points, exports) if exports else []:
            print(tally.row(), flush=True)
        if "damage" in wanted:
            print("\n| damage | search, repair, verify exits | clean | last line |")
            print("|---|---|---|---|", flush=True)
            cases = damage_cases(work / "damage")
            print(f"\n{sum(c[2] for c in cases)} of {len(cases)} damage cases clean")
    print(
        f"\n{time.perf_counter() - started:.0f} s; load average {load[0]:.1f} at the start, "
        f"{os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
