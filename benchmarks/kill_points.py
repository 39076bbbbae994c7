"""Killing a CLI command at its write points: the machinery of
``benchmarks/fault_injection.py`` (which holds the scenarios and what each checks after
a kill).

A *write point* is a call, made by the command's main thread, that changes something
on disk: PyAV muxing a packet, a write to a Python file, an SQLite statement (the
manifest and the lexical index; reads count too, as SQLite cannot tell them apart
here), a rename, an unlink, an fsync, a Chroma ``add``/``upsert``/``update``/``delete``.
The command runs in a child process under :data:`KILLER`, a profile hook that numbers
these calls, its imports aside (``FAULT_SITES``: write them to a file), and sends the
process ``SIGKILL`` just before the ``FAULT_KILL_AT``-th: nothing of it is in the
package. One run lists the points; then the command is killed before the first call of
every distinct site (file and line) and at evenly spaced points in between, up to
``--points`` runs, each on a fresh copy of the same folder.
:func:`kill_everywhere` does this for one command and counts what came of it in a
:class:`Tally`; :func:`here` runs the CLI in this process instead, for the commands
that check a killed one's folder.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KILLED = -9

KILLER = r"""
import builtins, importlib, os, signal, sys, threading
from pathlib import Path
from llama_index_video.cli.main import main

C_WRITES = {
    "OutputContainer.mux": "mux", "BufferedWriter.write": "write", "FileIO.write": "write",
    "TextIOWrapper.write": "write", "replace": "rename", "rename": "rename",
    "unlink": "unlink", "remove": "unlink", "rmdir": "unlink", "fsync": "fsync",
    "Connection.execute": "sqlite", "Connection.executemany": "sqlite",
    "Connection.executescript": "sqlite", "Connection.commit": "sqlite",
    "Cursor.execute": "sqlite", "Cursor.executemany": "sqlite",
}
PY_WRITES = {"Collection.add", "Collection.upsert", "Collection.update", "Collection.delete"}
STD = {id(s) for s in (sys.stdout, sys.stderr, sys.stdout.buffer, sys.stderr.buffer)}
kill_at = int(os.environ.get("FAULT_KILL_AT", "0"))
log = os.environ.get("FAULT_SITES")
sites = []


def place(frame):
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def hook(frame, event, arg):
    if event == "c_call":
        kind = C_WRITES.get(getattr(arg, "__qualname__", ""))
        if kind is None or id(getattr(arg, "__self__", None)) in STD:
            return
        site = f"{kind} {place(frame)}"
    elif event == "call" and frame.f_code.co_qualname in PY_WRITES:
        if "chromadb" not in frame.f_code.co_filename:
            return
        site = f"chroma.{frame.f_code.co_qualname.split('.')[1]} {place(frame.f_back)}"
    else:
        return
    sites.append(site)
    if len(sites) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


# Imports run without the hook in the main thread: an import is no write point of the
# command, and under the hook a command's imports took twice as long (an ingest of three
# Markdown files: 22 s instead of 8 s on two busy cores).
def unhooked(load):
    def run(*args, **kwargs):
        global depth
        if not hooked or threading.get_ident() != threading.main_thread().ident:
            return load(*args, **kwargs)
        depth += 1
        sys.setprofile(None)
        try:
            return load(*args, **kwargs)
        finally:
            depth -= 1
            if depth == 0:
                sys.setprofile(hook)

    return run


depth, hooked = 0, True
builtins.__import__ = unhooked(builtins.__import__)
importlib.import_module = unhooked(importlib.import_module)
sys.setprofile(hook)
try:
    code = main(sys.argv[1:])
finally:
    hooked = False
    sys.setprofile(None)
    if log:
        Path(log).write_text("\n".join(sites))
sys.exit(code)
"""


def cli(
    *argv: str | Path, cwd: Path, kill_at: int = 0, sites: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process under :data:`KILLER` (``kill_at`` 0: never killed)."""
    env = {**os.environ, "FAULT_KILL_AT": str(kill_at), "PYTHONPATH": str(ROOT)}
    if sites is not None:
        env["FAULT_SITES"] = str(sites)
    return subprocess.run(
        [sys.executable, "-c", KILLER, *map(str, argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def write_points(*argv: str | Path, cwd: Path) -> list[str]:
    """The write points of one uninterrupted run, in order (``kind file:line``)."""
    log = cwd / "sites.txt"
    done = cli(*argv, cwd=cwd, sites=log)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv}: exit {done.returncode}: {done.stderr[-600:]}")
    text = log.read_text()
    log.unlink()
    return text.splitlines() if text else []


def chosen(sites: list[str], budget: int) -> list[int]:
    """Which points to kill at (1-based), ``budget`` of them: the first call of every
    distinct site (spread evenly over them when there are more than ``budget``), then
    points spread evenly over the whole run."""
    first = list({site: number for number, site in reversed(list(enumerate(sites, 1)))}.values())
    first.sort()
    if len(first) > budget:
        step = len(first) / budget
        return sorted({first[int(step * i)] for i in range(budget)})
    picked = set(first)
    spare = budget - len(picked)
    if spare and sites:
        step = len(sites) / (spare + 1)
        picked.update(min(len(sites), max(1, round(step * (i + 1)))) for i in range(spare))
    return sorted(picked)


def here(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI run in this process from ``cwd`` (cheaper than a child: no imports again);
    its exit status, what it printed and what it said on stderr."""
    from llama_index_video.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main([str(a) for a in argv])
    finally:
        os.chdir(previous)
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())


def one_line(done: subprocess.CompletedProcess[str]) -> bool:
    """No traceback, and an error (exit 2) is a single line."""
    return done.returncode != 70 and (done.returncode != 2 or done.stderr.count("\n") == 1)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Tally:
    """What one scenario's kills came to."""

    name: str
    points: int = 0  # write points of an uninterrupted run
    sites: int = 0  # distinct sites among them
    kills: int = 0
    finished: int = 0  # runs that ended before the point (fewer calls than the first run)
    held: int = 0  # kills after which every check passed
    leftovers: int = 0  # temporary files left beside an output (never under its name)
    failures: list[str] | None = None

    def row(self) -> str:
        bad = "; ".join((self.failures or [])[:3])
        return (
            f"| {self.name} | {self.points} | {self.sites} | {self.kills - self.finished} | "
            f"{self.held} of {self.kills} | "
            f"{self.leftovers} | {bad} |"
        )


def kill_everywhere(
    tally: Tally,
    argv: list[str | Path],
    setup: Callable[[Path], None],
    check: Callable[[Path, int], str | None],
    *,
    work: Path,
    budget: int,
    place: Path | None = None,
) -> Tally:
    """Kill ``argv`` at the chosen points, each on a folder ``setup`` made; ``check``
    returns what went wrong after a kill (None: it held). With ``place``, every run is
    in that one folder, made again each time (an index records its files' absolute
    paths: a copy elsewhere would see them as other files)."""
    work = work / "".join(c if c.isalnum() else "-" for c in tally.name)

    def fresh(name: str) -> Path:
        folder = work / name if place is None else cleared(place)
        setup(folder)
        return folder

    sites = write_points(*argv, cwd=fresh("points"))
    tally.points, tally.sites, tally.failures = len(sites), len(set(sites)), []
    for at in chosen(sites, budget):
        folder = fresh(f"kill-{at}")
        done = cli(*argv, cwd=folder, kill_at=at)
        tally.kills += 1
        tally.finished += done.returncode != KILLED  # this run made fewer calls
        problem = check(folder, at)
        if problem is None:
            tally.held += 1
        else:
            tally.failures.append(f"{sites[at - 1]}: {problem}")
        shutil.rmtree(folder, ignore_errors=True)
    return tally


def cleared(folder: Path) -> Path:
    """``folder`` deleted, and forgotten by this process's Chroma (so that an index made
    there again is read afresh)."""
    from llama_index_video.store.folder import IndexFolder

    IndexFolder(folder / "idx").release()
    shutil.rmtree(folder, ignore_errors=True)
    return folder
