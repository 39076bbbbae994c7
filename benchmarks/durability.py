"""When things go wrong: the real CLI, the real ``serve`` and a real ``chroma run``
server, treated as a hostile user and an unlucky machine would, on real speech.

Two real recordings (``tests/fixtures/speech/librivox_en.flac``, one reader, 25 s, its
sentences aligned; ``tests/fixtures/real_speech/ami_dev00.flac``, 30 s of a meeting)
are ingested once undisturbed: that run's rows per file are what every case must end
with. After each case, :func:`problems` checks the index: ``verify`` exits 0, the
vector store holds exactly the clean run's rows per file (nothing twice, nothing
missing), the lexical index holds the same row ids, and ``search`` finds the reader's
"ill disposed young man" at 7.3-9.8 s (within 2 s). Then ``verify --repair`` runs and
the checks run again.

Cases: ``ingest`` killed with -9 at spread times of a clean run (transcribing,
embedding, writing); two ``ingest`` at once; ``ingest`` of a new file and of a changed
one (and a killed re-ingest) while ``serve`` answers searches in a loop; ``watch``
catching a file while it is copied; a full disk (a small tmpfs, made larger after);
a read-only index folder; the index folder removed under ``serve``; the Chroma server
killed during ``ingest`` and started again. Every wait ends by construction (each child
has a timeout, each loop a deadline). The disk and read-only cases mount tmpfs, so they
need root; without it they are reported as not run.

    python benchmarks/durability.py [--kills 6] [--only kills,serve,...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.service_load import HOST, _free_port  # noqa: E402
from benchmarks.service_reingest import _wait_for_health  # noqa: E402

READER = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
MEETING = ROOT / "tests" / "fixtures" / "real_speech" / "ami_dev00.flac"
QUERY = "ill disposed young man"
SAID_AT = (7.31, 9.84)  # librivox_en.json: "he was not an ill disposed young man"
TOLERANCE_S = 2.0
SHIFT_S = 3.0  # the changed edition: the reader's file after this much silence
CHILD_TIMEOUT_S = 600.0
CLI = (sys.executable, "-m", "llama_index_video.cli.main")


def cli(
    *argv: str | Path, cwd: Path, timeout: float = CHILD_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *map(str, argv)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def started(*argv: str | Path, cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [*CLI, *map(str, argv)], cwd=cwd, env=_env(), stdout=out, stderr=out
        )


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def ended(process: subprocess.Popen[bytes], how: int = signal.SIGKILL) -> int:
    if process.poll() is None:
        process.send_signal(how)
    return process.wait(timeout=60)


def one_line(done: subprocess.CompletedProcess[str]) -> bool:
    """Exit 0, or an error in one line with no traceback."""
    return done.returncode == 0 or (
        "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0
    )


def rows_by_file(sqlite_path: Path) -> Counter[str]:
    """Vector-store rows per source file name, read from Chroma's own SQLite."""
    with sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True) as db:
        found = db.execute(
            "SELECT string_value FROM embedding_metadata WHERE key = 'source'"
        ).fetchall()
    return Counter(Path(source).name for (source,) in found)


def vector_ids(sqlite_path: Path) -> set[str]:
    with sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True) as db:
        return {row[0] for row in db.execute("SELECT embedding_id FROM embeddings")}


def lexical_ids(index: Path) -> set[str]:
    generation = json.loads((index / "lexical" / "current").read_text())["generation"]
    nodes = json.loads((index / "lexical" / f"bm25-{generation}" / "nodes.json").read_text())
    return set(nodes["ids"])


def found_at(index: Path, cwd: Path, shift: float = 0.0) -> str | None:
    """None if ``search`` ranks the reader's moment first, at its time (+ ``shift``)."""
    done = cli("search", "--index", index, "--json", QUERY, cwd=cwd, timeout=300)
    if done.returncode != 0:
        return f"search exit {done.returncode}: {done.stderr.strip()[-160:]}"
    hits = json.loads(done.stdout)
    if not hits:
        return "search found nothing"
    first = hits[0]
    start, end = SAID_AT[0] + shift - TOLERANCE_S, SAID_AT[1] + shift + TOLERANCE_S
    if not (Path(first["source"]).stem.startswith("reader") and start <= first["start"] <= end):
        return f"first hit {Path(first['source']).name} at {first['start']:.1f} s"
    return None


def problems(
    index: Path,
    cwd: Path,
    expected: Counter[str],
    chroma_sqlite: Path | None = None,
    shift: float = 0.0,
) -> list[str]:
    """What is wrong with the index (empty: nothing), then again after ``verify --repair``."""
    store = chroma_sqlite or index / "chroma" / "chroma.sqlite3"
    found: list[str] = []
    for stage in ("", "after repair: "):
        if stage:
            repair = cli("verify", "--repair", "--index", index, "--quiet", cwd=cwd)
            if repair.returncode != 0 or not one_line(repair):
                found.append(f"repair exit {repair.returncode}")
        verify = cli("verify", "--index", index, cwd=cwd)
        if verify.returncode != 0:
            found.append(f"{stage}verify exit {verify.returncode}")
        rows = rows_by_file(store)
        if rows != expected:
            found.append(f"{stage}rows {dict(rows)}, not {dict(expected)}")
        if chroma_sqlite is None and lexical_ids(index) != vector_ids(store):
            found.append(f"{stage}lexical ids differ from the vector store's")
        missed = found_at(index, cwd, shift)
        if missed:
            found.append(f"{stage}{missed}")
    return found


class Trial:
    """The material (copies under stable names) and the clean run's figures."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.media = work / "media"
        self.media.mkdir()
        self.reader = self.media / "reader.flac"
        self.meeting = self.media / "meeting.flac"
        shutil.copy(READER, self.reader)
        shutil.copy(MEETING, self.meeting)
        self.changed = work / "reader_changed.flac"
        subprocess.run(
            [
                "ffmpeg",
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-t",
                str(SHIFT_S),
                "-i",
                "anullsrc=r=16000:cl=mono",
                "-i",
                str(READER),
                "-filter_complex",
                "[0:a][1:a]concat=n=2:v=0:a=1",
                str(self.changed),
            ],
            check=True,
            timeout=120,
        )
        clean = work / "clean"
        began = time.monotonic()
        done = cli("ingest", "--index", clean, self.reader, self.meeting, "--quiet", cwd=work)
        self.seconds = time.monotonic() - began
        if done.returncode != 0:
            raise SystemExit(f"the clean ingest failed: {done.stderr[-400:]}")
        self.expected = rows_by_file(clean / "chroma" / "chroma.sqlite3")
        print(
            f"clean ingest: {self.seconds:.1f} s, rows {dict(self.expected)}, load {load_average()}"
        )

    def both(self) -> tuple[Path, Path]:
        return self.reader, self.meeting


Row = tuple[str, str, str]  # case, outcome, problems


def kills(trial: Trial, count: int) -> Iterator[Row]:
    """``ingest`` killed with -9 at spread fractions of the clean run's time, then run
    again: the killed run's exit, and the index's problems after the second."""
    for n in range(1, count + 1):
        after = trial.seconds * n / (count + 1)
        index = trial.work / f"killed-{n}"
        writer = started(
            "ingest",
            "--index",
            index,
            *trial.both(),
            "--quiet",
            cwd=trial.work,
            log=trial.work / f"killed-{n}.log",
        )
        time.sleep(after)
        code = ended(writer)
        again = cli("ingest", "--index", index, *trial.both(), "--quiet", cwd=trial.work)
        found = problems(index, trial.work, trial.expected)
        if again.returncode != 0:
            found.insert(0, f"ingest again exit {again.returncode}: {again.stderr.strip()[-160:]}")
        yield (
            f"`ingest` killed -9 at {after:.1f} s of {trial.seconds:.1f}",
            "killed" if code == -signal.SIGKILL else f"had ended ({code})",
            "; ".join(found),
        )


def two_writers(trial: Trial) -> Iterator[Row]:
    index = trial.work / "two"
    first = started(
        "ingest",
        "--index",
        index,
        *trial.both(),
        "--quiet",
        cwd=trial.work,
        log=trial.work / "two-1.log",
    )
    second = started(
        "ingest",
        "--index",
        index,
        trial.meeting,
        trial.reader,
        "--quiet",
        cwd=trial.work,
        log=trial.work / "two-2.log",
    )
    codes = [process.wait(timeout=CHILD_TIMEOUT_S) for process in (first, second)]
    yield (
        "two `ingest` at once, same files",
        f"exits {codes[0]}, {codes[1]}",
        "; ".join(problems(index, trial.work, trial.expected)),
    )


@contextmanager
def serving(index: Path, cwd: Path, log: Path) -> Iterator[str]:
    port = _free_port()
    server = started(
        "serve", "--index", index, "--port", str(port), "--llm", "none", cwd=cwd, log=log
    )
    base = f"http://{HOST}:{port}"
    try:
        _wait_for_health(base, server)
        yield base
    finally:
        ended(server, signal.SIGTERM)


class Searches:
    """Searches for :data:`QUERY` back to back in a thread until stopped: statuses, and
    how many 200s held no hit of the reader's file."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.statuses: Counter[int] = Counter()
        self.empty = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=60) as client:
            while not self._stop.is_set():
                try:
                    answer = client.get("/api/search", params={"q": QUERY})
                except httpx.HTTPError:
                    self.statuses[0] += 1
                    continue
                self.statuses[answer.status_code] += 1
                if answer.status_code == 200 and not any(
                    Path(hit["source"]).stem.startswith("reader") for hit in answer.json()
                ):
                    self.empty += 1

    def stop(self) -> str:
        self._stop.set()
        self._thread.join(timeout=120)
        return (
            f"{sum(self.statuses.values())} searches: "
            + ", ".join(f"{code or 'no answer'} x{n}" for code, n in sorted(self.statuses.items()))
            + f"; {self.empty} without the reader"
        )


def while_serving(trial: Trial) -> Iterator[Row]:
    """``serve`` over the reader's index answers in a loop while the meeting is ingested,
    the reader's file is replaced by a changed edition, a re-ingest of it is killed and
    one finishes."""
    index = trial.work / "served"
    cli("ingest", "--index", index, trial.reader, "--quiet", cwd=trial.work)
    log = trial.work / "served.log"
    with serving(index, trial.work, log) as base:
        searches = Searches(base)
        added = cli("ingest", "--index", index, trial.meeting, "--quiet", cwd=trial.work)
        shutil.copy(trial.changed, trial.reader)
        try:
            writer = started(
                "ingest",
                "--index",
                index,
                trial.reader,
                "--quiet",
                cwd=trial.work,
                log=trial.work / "served-killed.log",
            )
            time.sleep(trial.seconds / 2)
            ended(writer)
            replaced = cli("ingest", "--index", index, trial.reader, "--quiet", cwd=trial.work)
            time.sleep(2)
            outcome = searches.stop()
            found = problems(index, trial.work, trial.expected, shift=SHIFT_S)
        finally:
            shutil.copy(READER, trial.reader)
    tracebacks = log.read_text().count("Traceback")
    if added.returncode or replaced.returncode:
        found.insert(0, f"ingest exits {added.returncode}, {replaced.returncode}")
    if tracebacks:
        found.insert(0, f"{tracebacks} tracebacks in serve's log")
    yield (
        "`ingest` new + changed file (one killed) while `serve` answers",
        outcome,
        "; ".join(found),
    )


def watch_copy(trial: Trial) -> Iterator[Row]:
    """``watch`` (settle 1 s) while the reader's file is copied in four parts 3 s apart."""
    folder, index = trial.work / "watched", trial.work / "watch-index"
    folder.mkdir()
    log = trial.work / "watch.log"
    watcher = started(
        "watch", folder, "--index", index, "--settle", "1", "--poll", "0.5", cwd=trial.work, log=log
    )
    try:
        deadline = time.monotonic() + 300
        while "watching" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        data = trial.reader.read_bytes()
        with (folder / "reader.flac").open("wb") as out:
            for part in range(4):
                out.write(data[len(data) * part // 4 : len(data) * (part + 1) // 4])
                out.flush()
                time.sleep(3)
        expected = Counter({"reader.flac": trial.expected["reader.flac"]})
        deadline = time.monotonic() + 3 * trial.seconds + 60
        while time.monotonic() < deadline:
            store = index / "chroma" / "chroma.sqlite3"
            if (
                store.exists()
                and rows_by_file(store) == expected
                and "indexed" in log.read_text().splitlines()[-1]
            ):
                break
            time.sleep(1)
    finally:
        ended(watcher, signal.SIGINT)
    indexed = sum(line.startswith("indexed") for line in log.read_text().splitlines())
    yield (
        "`watch` catches a file while it is copied (4 parts, 3 s apart)",
        f"indexed {indexed} times",
        "; ".join(problems(index, trial.work, expected)),
    )


@contextmanager
def mounted(folder: Path, size: str) -> Iterator[Path | None]:
    """A tmpfs of ``size`` at ``folder`` (None when this process may not mount)."""
    folder.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
        timeout=30,
    )
    try:
        yield folder if made.returncode == 0 else None
    finally:
        if made.returncode == 0:
            subprocess.run(["umount", "-l", str(folder)], check=False, timeout=30)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True, timeout=30)


def disk_full(trial: Trial, sizes: list[str]) -> Iterator[Row]:
    for size in sizes:
        with mounted(trial.work / f"disk-{size}", size) as disk:
            if disk is None:
                yield (f"disk full ({size} tmpfs)", "not run: cannot mount", "")
                continue
            index = disk / "idx"
            full = cli("ingest", "--index", index, *trial.both(), "--quiet", cwd=trial.work)
            said = full.stderr.strip().splitlines()[-1:] or [""]
            remount(disk, "size=16m")
            again = cli("ingest", "--index", index, *trial.both(), "--quiet", cwd=trial.work)
            found = problems(index, trial.work, trial.expected)
            if not one_line(full):
                found.insert(0, "not one line")
            if again.returncode != 0:
                found.insert(0, f"ingest again exit {again.returncode}")
            yield (
                f"disk full ({size} tmpfs), then 16 MB",
                f"exit {full.returncode}: {said[0][:90]}",
                "; ".join(found),
            )


def read_only(trial: Trial) -> Iterator[Row]:
    with mounted(trial.work / "read-only", "16m") as disk:
        if disk is None:
            yield ("read-only index folder", "not run: cannot mount", "")
            return
        index = disk / "idx"
        cli("ingest", "--index", index, trial.reader, "--quiet", cwd=trial.work)
        remount(disk, "ro")
        exits = {
            name: cli(*argv, "--index", index, cwd=trial.work)
            for name, argv in (
                ("search", ("search", QUERY)),
                ("verify", ("verify",)),
                ("verify --repair", ("verify", "--repair")),
                ("ingest", ("ingest", trial.meeting, "--quiet")),
            )
        }
        found = [f"{name} not one line" for name, done in exits.items() if not one_line(done)]
        missed = found_at(index, trial.work)
        if missed:
            found.append(missed)
        remount(disk, "rw")
        again = cli("ingest", "--index", index, trial.meeting, "--quiet", cwd=trial.work)
        if again.returncode != 0:
            found.append(f"ingest once writable exit {again.returncode}")
        found += problems(index, trial.work, trial.expected)
        yield (
            "read-only index folder, then writable",
            ", ".join(f"{name} {done.returncode}" for name, done in exits.items()),
            "; ".join(found),
        )


def removed_under_service(trial: Trial) -> Iterator[Row]:
    index = trial.work / "removed"
    cli("ingest", "--index", index, trial.reader, "--quiet", cwd=trial.work)
    log = trial.work / "removed.log"
    with serving(index, trial.work, log) as base:
        searches = Searches(base)
        time.sleep(2)
        shutil.rmtree(index)
        time.sleep(3)
        again = cli("ingest", "--index", index, *trial.both(), "--quiet", cwd=trial.work)
        time.sleep(2)
        library = httpx.get(f"{base}/api/library", timeout=60)
        outcome = searches.stop()
    listed = (
        sorted(Path(entry["source"]).name for entry in library.json())
        if library.status_code == 200
        else []
    )
    found = problems(index, trial.work, trial.expected)
    if again.returncode != 0:
        found.insert(0, f"ingest again exit {again.returncode}")
    if listed != sorted(trial.expected):
        found.insert(0, f"serve lists {listed}")
    tracebacks = log.read_text().count("Traceback")
    if tracebacks:
        found.insert(0, f"{tracebacks} tracebacks in serve's log")
    yield ("index folder removed under `serve`, then ingested again", outcome, "; ".join(found))


def chroma_away(trial: Trial) -> Iterator[Row]:
    """The Chroma server killed with -9 while ``ingest`` transcribes, then while it
    writes, started again: the failed runs' exits, then the index after ``ingest`` again."""
    data, index, port = trial.work / "chroma-data", trial.work / "chroma-index", _free_port()
    url = f"http://{HOST}:{port}"
    log = trial.work / "chroma.log"

    def server() -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            process = subprocess.Popen(
                ["chroma", "run", "--path", str(data), "--port", str(port)],
                cwd=trial.work,
                stdout=out,
                stderr=out,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    return process
            except httpx.HTTPError:
                time.sleep(0.25)
        raise SystemExit(f"chroma run did not start: {log.read_text()[-400:]}")

    chroma = server()
    exits = []
    try:
        for fraction in (0.5, 0.9):
            writer = started(
                "ingest",
                "--index",
                index,
                "--chroma-url",
                url,
                *trial.both(),
                "--quiet",
                cwd=trial.work,
                log=trial.work / "chroma-ingest.log",
            )
            time.sleep(trial.seconds * fraction)
            ended(chroma)
            exits.append(writer.wait(timeout=CHILD_TIMEOUT_S))
            chroma = server()
        again = cli("ingest", "--index", index, *trial.both(), "--quiet", cwd=trial.work)
        found = problems(index, trial.work, trial.expected, chroma_sqlite=data / "chroma.sqlite3")
        if again.returncode != 0:
            found.insert(0, f"ingest again exit {again.returncode}: {again.stderr.strip()[-160:]}")
    finally:
        ended(chroma)
    said = [line for line in (trial.work / "chroma-ingest.log").read_text().splitlines() if line]
    tracebacks = sum("Traceback" in line for line in said)
    if tracebacks:
        found.insert(0, f"{tracebacks} tracebacks")
    yield (
        "Chroma server killed during `ingest` (at 50% and 90%), started again",
        f"exits {', '.join(map(str, exits))}",
        "; ".join(found),
    )


CASES: dict[str, Callable[[Trial, argparse.Namespace], Iterator[Row]]] = {
    "kills": lambda trial, args: kills(trial, args.kills),
    "writers": lambda trial, _: two_writers(trial),
    "serve": lambda trial, _: while_serving(trial),
    "watch": lambda trial, _: watch_copy(trial),
    "disk": lambda trial, args: disk_full(trial, args.disk_sizes.split(",")),
    "readonly": lambda trial, _: read_only(trial),
    "removed": lambda trial, _: removed_under_service(trial),
    "chroma": lambda trial, _: chroma_away(trial),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=6, help="kill points of `ingest` (1-20)")
    parser.add_argument("--disk-sizes", default="300k,500k,640k", help="tmpfs sizes to fill")
    parser.add_argument("--only", help=f"comma-separated cases of {', '.join(CASES)}")
    args = parser.parse_args(argv)
    if not 1 <= args.kills <= 20:
        parser.error("--kills must be within 1-20")
    chosen = args.only.split(",") if args.only else list(CASES)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="durability-") as folder:
        trial = Trial(Path(folder))
        print("| case | outcome | problems after it, then after `verify --repair` |")
        print("|---|---|---|")
        failed = 0
        for name in chosen:
            for case, outcome, found in CASES[name](trial, args):
                failed += bool(found)
                print(f"| {case} | {outcome} | {found or 'none'} |", flush=True)
    print(f"{time.monotonic() - began:.0f} s, load {load_average()}, {failed} cases with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
