"""How big the manifest's write-ahead log grows while an app keeps an index open.

Run from the repository root::

    python benchmarks/manifest_wal.py [--ingests 40] [--every 10]

An app's ``VideoIndex`` reading the folder in place holds the manifest at the version
it read (a SQLite read transaction, :meth:`~llama_index_video.store.manifest.Manifest.hold`)
until its next read after a writer has finished. SQLite cannot reset the write-ahead
log (``manifest.sqlite-wal``) past the oldest version a reader holds, so every later
commit is appended. This measures it: one index of a synthetic 300-section manual,
copied once per case, then ``--ingests`` runs of another process (one ``ingest`` of one
new small Markdown file each, its own writer run each time) while

- ``no reader``: nobody else has the index open;
- ``reading``: an app searches once after each run (it moves to the new version);
- ``idle``: an app searched once before the first run and then does nothing; after the
  last run it searches once more, and one more run follows (``idle, then read``).

Reported: the size of ``manifest.sqlite-wal`` after every ``--every`` runs, per case,
and the manifest itself. Today's code only: the cases are each other's baseline.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402

SECTIONS = 300
QUESTION = "how often is valve 12 of the cooling loop checked"
CASES = ("no reader", "reading", "idle")
WRITER = """
import sys
from llama_index_video.index import VideoIndex
index = VideoIndex(sys.argv[1])
for line in sys.stdin:  # ends with its input: one file a line
    report = index.ingest([line.strip()], wait=600)
    print("ok" if report.ok else "failed", flush=True)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ingests", type=int, default=40, help="writer runs per case (1-1000)")
    parser.add_argument("--every", type=int, default=10, help="report after every N runs")
    args = parser.parse_args(argv)
    if not 1 <= args.ingests <= 1000 or not 1 <= args.every <= args.ingests:
        parser.error("--ingests must be within 1..1000 and --every within 1..--ingests")
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="manifest-wal-") as scratch:
        folder = Path(scratch)
        base = _base_index(folder)
        sizes = {case: _case(case, base, folder, args) for case in CASES}
    marks = sorted({*range(args.every, args.ingests + 1, args.every), args.ingests})
    print(f"manifest.sqlite-wal (KiB) after N writer runs of one small file each ({SECTIONS}")
    print("-section synthetic manual indexed first; each case on a copy of that index)")
    print(f"{'case':>16} " + " ".join(f"{f'N={n}':>8}" for n in marks) + "   after")
    for case, (wal, after, manifest) in sizes.items():
        row = " ".join(f"{wal[n - 1] / 1024:8.0f}" for n in marks)
        tail = f"{after / 1024:8.0f}" if after is not None else f"{'':>8}"
        print(f"{case:>16} {row}   {tail}  (manifest {manifest / 1024:.0f} KiB)")
    print(
        "after: idle, then read: the idle app searched once, and one more run followed; "
        f"load {load_before} -> {load_average()}; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    return 0


def _base_index(folder: Path) -> Path:
    from llama_index_video.cli.main import main as cli
    from llama_index_video.store.folder import IndexFolder

    manual = folder / "manual.md"
    manual.write_text(
        "\n\n".join(
            f"## Valve {n}\n\nValve {n} of the cooling loop is checked every {n % 9 + 1} days."
            for n in range(SECTIONS)
        )
    )
    index = folder / "base"
    if cli(["ingest", str(manual), "--index", str(index), "--quiet"]) != 0:
        raise SystemExit("the first ingest failed")
    IndexFolder(index).release()
    return index


def _case(
    case: str, base: Path, folder: Path, args: argparse.Namespace
) -> tuple[list[int], int | None, int]:
    """WAL sizes after each run, after the idle app's read and one more run (idle case
    only), and the manifest's size at the end."""
    from llama_index_video.index import VideoIndex

    index = folder / case.replace(" ", "-")
    shutil.copytree(base, index)
    notes = folder / f"{index.name}-notes"
    notes.mkdir()
    app = None if case == "no reader" else VideoIndex(index)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert writer.stdin is not None and writer.stdout is not None
    wal = index / "manifest.sqlite-wal"
    sizes: list[int] = []
    after = None
    try:
        if app is not None:
            app.search(QUESTION)
        for n in range(args.ingests + (case == "idle")):  # ends: a fixed number of runs
            note = notes / f"note_{n:04d}.md"
            note.write_text(f"# Note {n}\n\nThe pump {n} is serviced in week {n % 52 + 1}.")
            writer.stdin.write(f"{note}\n")
            writer.stdin.flush()
            if writer.stdout.readline().strip() != "ok":
                raise SystemExit(f"{case}: run {n + 1} failed")
            if n == args.ingests:  # the idle case's last run, after its read
                after = wal.stat().st_size
                break
            sizes.append(wal.stat().st_size if wal.exists() else 0)
            if case == "reading" or (case == "idle" and n == args.ingests - 1):
                assert app is not None
                app.search(QUESTION)
    finally:
        writer.stdin.close()
        writer.wait(timeout=600)
        if app is not None:
            app.close()
    return sizes, after, (index / "manifest.sqlite").stat().st_size


if __name__ == "__main__":
    sys.exit(main())
