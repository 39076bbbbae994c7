"""What hiding unfinished files costs a search: ``Manifest.indexed_among`` per query.

Run from the repository root::

    python benchmarks/visibility_filter.py [--files 100 1000 10000] [--candidates 50]

Every search asks the manifest once which of its candidates' contents are complete
(``VideoRetriever``'s ``visible`` check, issue 11). This measures that lookup on
manifests of growing size, for the number of candidates the text channels share
(``MIN_CANDIDATES`` = 50), and, as the baseline measured in the same run, the lookup
every search already did before (``Manifest.paths_of`` for one hit's file, as
``VideoIndex.locate`` does). Timings vary with the machine's load: compare the two
columns, not runs.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from llama_index_video.store.manifest import Manifest, PathRecord


def _median_ms(call: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"{'files':>7} {'indexed_among(50) ms':>22} {'paths_of(1) ms (baseline)':>27}")
    for count in args.files:
        with tempfile.TemporaryDirectory() as folder:
            manifest = Manifest(Path(folder) / "manifest.sqlite")
            keys = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(count)]
            with manifest.transaction():
                for n, key in enumerate(keys):
                    manifest.set_file(key, "indexed" if n % 10 else "indexing", node_count=40)
                    manifest.set_path(PathRecord(f"/media/{n}.mp4", f"{n}.mp4", key, 1, 1))
            among = _median_ms(
                lambda m=manifest, c=keys[: args.candidates]: m.indexed_among(c), args.repeat
            )
            paths = _median_ms(lambda m=manifest, k=keys[0]: m.paths_of(k), args.repeat)
            manifest.close()
        print(f"{count:>7} {among:>22.3f} {paths:>27.3f}")


if __name__ == "__main__":
    main()
