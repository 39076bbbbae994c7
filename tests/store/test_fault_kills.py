"""``ingest`` killed with ``SIGKILL`` at its write points: the next ``ingest`` finishes.

Two of the kills ``benchmarks/fault_injection.py`` makes (all of them, with their counts,
are in docs/benchmarks.md: new files with frames and chapters too): an ``ingest`` that
replaces a changed file, killed before its first deletion of the old rows and before
its last write point (the relinking that ends a run). After each, the same ``ingest`` again
exits 0, ``verify`` finds nothing wrong (rows, lexical index, reachability), the index
holds exactly the rows of an uninterrupted run (nothing twice), every file is found,
and no row of the changed file's old version is left. (Two kills only: each costs a
process start and an ingest, minutes on a busy shared machine.)
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.fault_injection import CHANGED_ROOF, FOUND_BY, _rows, resumed, text_index
from benchmarks.kill_points import KILLED, cleared, cli, write_points

ARGV: list[str | Path] = ["ingest", "src", "--index", "idx", "--ocr", "off", "--quiet"]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """(the folder an index of three Markdown files was made in, a copy of it)."""
    work = tmp_path_factory.mktemp("kills")
    place = text_index(work)
    saved = work / "saved"
    shutil.copytree(place, saved)
    return place, saved


def points_of(
    made: tuple[Path, Path], change: Callable[[Path], None], pick: Callable[[list[str]], list[int]]
) -> tuple[Path, list[tuple[str, int]], int]:
    """Run the ingest once whole on the index with ``change`` made to its sources: the
    folder it runs in, the points ``pick`` chooses among its write points (with their
    sites), and the rows an uninterrupted run leaves."""
    place, saved = made
    shutil.copytree(saved, cleared(place))
    change(place / "src")
    sites = write_points(*ARGV, cwd=place)
    return place, [(sites[at - 1], at) for at in pick(sites)], _rows(place / "idx")


def kill_at(made: tuple[Path, Path], change: Callable[[Path], None], at: int) -> int:
    """The index made again with ``change``, and the ingest killed at point ``at``: its exit."""
    place, saved = made
    shutil.copytree(saved, cleared(place))
    change(place / "src")
    return cli(*ARGV, cwd=place, kill_at=at).returncode


def first_of(sites: list[str], *wanted: str) -> list[int]:
    """The first point of each ``wanted`` kind or file (1-based), and the last point."""
    points = [next(n for n, site in enumerate(sites, 1) if want in site) for want in wanted]
    return sorted({*points, len(sites)})


def change_roof(src: Path) -> None:
    (src / "roof.md").write_text(CHANGED_ROOF)


@pytest.mark.timeout(900)
def test_an_ingest_replacing_a_file_killed_anywhere_is_finished_by_the_next(made):
    place, points, rows = points_of(made, change_roof, lambda s: first_of(s, "chroma.delete"))
    assert len(points) == 2
    for site, at in points:
        assert kill_at(made, change_roof, at) == KILLED, site
        assert resumed(place, ARGV, FOUND_BY, rows, "October storm") is None, site
