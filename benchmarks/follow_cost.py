"""What following other writers costs a long-lived ``VideoIndex``'s reads.

Run from the repository root::

    python benchmarks/follow_cost.py [--searches 200] [--rounds 3] [--baseline-ref REF]
                                     [--snapshot-reads] [--json FILE]

A ``VideoIndex`` an app keeps open reads the folder's lock file before each read, to
move to the version another process's writer has finished (reloaded in place, the
default; copied, with ``--snapshot-reads``, in the versions that have the option) once
it has, and holds the folder's lease (:mod:`llama_index_video.store.lease`, and the
folder's ``read.lock`` shared where the version has it) while it reads. This measures
what that adds to a warm search and to a kept retriever's ``retrieve``: each version
(today's checkout, and the source at ``--baseline-ref``, by default the commit before
reads followed writers) opens the same index in a process of its own and times
``--searches`` calls of each after five warm-up calls, ``--rounds`` times, the
versions taking turns. Nobody writes meanwhile, so both versions do the same work but
the check. Then each process copies the index, has another process
(``ingest`` of its own version) replace the manual with a second edition in the copy,
and asks again with what it kept: the kept retriever's hits of the second edition (of
5), and whether a search filtered by modality failed, and how long the first read took (the version
moved to: the folder reloaded in place, or, with snapshot reads, copied and opened);
and how long that ``ingest`` of the replaced manual took (wall, its own process: what
a writer deferring the old rows' deletion to its commit step costs, if anything); last,
it times searches of the copy while another process holds its writer lock (writing
nothing): today's reads then keep their vector queries to the version they loaded
(``search_writing``).
Synthetic material: a Markdown manual of 300
sections, ingested once by each version into an index of its own (the default local embedding;
an older version may not write to a newer one's index).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.baseline import Version, compiled_env, load_average, release, run, today

BASELINE_REF = "a62fde0"
"""The commit just before reads followed other processes' writers (049d7dd)."""
QUESTION = "how often is valve 12 of the cooling loop checked"
SECTIONS = 300

HOLD = """
import sys
from pathlib import Path
from llama_index_video.store.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire(wait=0)
print("held", flush=True)
sys.stdin.read()
lock.release()
"""
TIMED = """
import inspect, json, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from llama_index_video.index import VideoIndex
# snapshot reads when asked, where the version has them (opt-in); else in place
SNAPSHOTS = "snapshot_reads" in inspect.signature(VideoIndex).parameters
OPTIONS = {"snapshot_reads": True} if SNAPSHOTS and sys.argv[4] == "1" else {}
index = VideoIndex(sys.argv[1], **OPTIONS)
retriever = index.as_retriever(top_k=5)
calls = {"search": lambda: index.search(QUESTION, top_k=5),
         "retrieve": lambda: retriever.retrieve(QUESTION)}
found = {}
def timed(call):
    for _ in range(5):
        call()
    times = []
    for _ in range(int(sys.argv[2])):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    times.sort()
    return [statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000]
for name, call in calls.items():
    found[name] = timed(call)
index.close()
copy = Path(tempfile.mkdtemp()) / "index"
shutil.copytree(sys.argv[1], copy)
manual = Path(sys.argv[3])
index = VideoIndex(copy, **OPTIONS)
retriever = index.as_retriever(top_k=5)
retriever.retrieve(QUESTION)
edition = manual.with_name("second.md")
edition.write_text(manual.read_text().replace("Valve", "Second-edition valve"))
shutil.copy(edition, manual.with_name("work") / "manual.md")
started = time.perf_counter()
done = subprocess.run([sys.executable, "-m", "llama_index_video.cli.main", "ingest",
                       str(manual.with_name("work") / "manual.md"), "--index", str(copy),
                       "--quiet"], capture_output=True, text=True)
if done.returncode != 0:
    raise SystemExit(f"the replacing ingest failed: {done.stdout} {done.stderr}")
ingest = time.perf_counter() - started
started = time.perf_counter()
hits = retriever.retrieve(QUESTION)
first = (time.perf_counter() - started) * 1000
found["after"] = [sum("Second-edition" in h.node.get_content() for h in hits), 0, first, ingest]
try:
    index.search(QUESTION, top_k=5, modalities=["text"])
except Exception as exc:
    found["after"][1] = 1
    print(type(exc).__name__, exc, file=sys.stderr)
# another process holds the copy's writer lock (writing nothing): reads keep to the
# version they loaded (today's: vector queries kept to its files)
holder = subprocess.Popen([sys.executable, "-c", HOLD, str(copy)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
assert holder.stdout.readline().strip() == "held"
found["search_writing"] = timed(lambda: index.search(QUESTION, top_k=5))
holder.stdin.close()
holder.wait()
index.close()
shutil.rmtree(copy.parent)
print(json.dumps(found))
""".replace("QUESTION", repr(QUESTION)).replace("HOLD", repr(HOLD))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--searches", type=int, default=200, help="timed calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per version (1-20)")
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline")
    parser.add_argument(
        "--snapshot-reads",
        action="store_true",
        help="open the index with snapshot_reads=True in the versions that have it",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.rounds <= 20 or not 10 <= args.searches <= 10_000:
        parser.error("--rounds must be within 1..20 and --searches within 10..10000")
    versions = [release(args.baseline_ref), today()]
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="follow-cost-") as scratch:
        # each version its own index of the same manual: an older version may not write
        # to a newer one's (the lexical index's language column)
        indexes = {v.name: _index(v, Path(scratch) / f"v{n}") for n, v in enumerate(versions)}
        runs: dict[str, list[dict[str, list[float]]]] = {v.name: [] for v in versions}
        for round_ in range(args.rounds):  # ends: a fixed number of rounds
            for version in versions if round_ % 2 == 0 else versions[::-1]:
                runs[version.name].append(
                    _timed(
                        version,
                        indexes[version.name],
                        args.searches,
                        snapshots=args.snapshot_reads,
                    )
                )
    medians = {
        name: {
            call: {
                "median_ms": statistics.median(r[call][0] for r in found),
                "p95_ms": statistics.median(r[call][1] for r in found),
            }
            for call in ("search", "retrieve", "search_writing")
        }
        for name, found in runs.items()
    }
    after = {
        name: {
            "second_edition_hits_of_5": [r["after"][0] for r in found],
            "filtered_search_failed": sum(int(r["after"][1]) for r in found),
            "first_read_after_ms": statistics.median(r["after"][2] for r in found),
            "replacing_ingest_s": statistics.median(r["after"][3] for r in found),
            "replacing_ingest_s_per_round": [round(r["after"][3], 2) for r in found],
        }
        for name, found in runs.items()
    }
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_average": {"before": load_before, "after": load_average()},
        "searches": args.searches,
        "rounds": args.rounds,
        "snapshot_reads": args.snapshot_reads,
        "versions": [v.name for v in versions],
        "figures": medians,
        "after_another_process_replaced_the_file": after,
    }
    for name, calls in medians.items():
        for call, figure in calls.items():
            print(
                f"{name:>22} {call:>14}: median {figure['median_ms']:6.2f} ms, "
                f"p95 {figure['p95_ms']:6.2f} ms"
            )
    check = _check_cost()
    result["check_us"] = check
    print(
        f"{'today':>22} the check alone: lock file read {check['read_generation']:.1f} us, "
        f"lease taken and given back (with read.lock) {check['lease']:.1f} us, commit step "
        f"looked for {check['committing']:.1f} us (a search reads the lock file some six "
        "times, one of them looking for a commit step, and takes the lease once)"
    )
    for name, figure in after.items():
        print(
            f"{name:>22} after a re-ingest elsewhere: second-edition hits of 5 per round "
            f"{figure['second_edition_hits_of_5']}, filtered searches failed "
            f"{figure['filtered_search_failed']} of {args.rounds}; the first read "
            f"(moving to the new version) {figure['first_read_after_ms']:.0f} ms median; "
            f"that ingest took {figure['replacing_ingest_s']:.2f} s median"
        )
    print(f"load {result['load_average']}; {result['machine']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


def _check_cost(*, calls: int = 20_000) -> dict[str, float]:
    """Microseconds per call of what a read adds, in this process (today's code): one
    read of the lock file, and the folder's lease taken shared and given back."""
    import timeit

    from llama_index_video.store.lease import folder_lease
    from llama_index_video.store.lock import WriterLock, committing, read_generation

    with tempfile.TemporaryDirectory(prefix="follow-check-") as folder:
        path = Path(folder)
        with WriterLock(path) as lock:
            lock.acquire(wait=0)

        def leased() -> None:
            with folder_lease(path).shared():
                pass

        return {
            "read_generation": timeit.timeit(lambda: read_generation(path), number=calls)
            / calls
            * 1e6,
            "lease": timeit.timeit(leased, number=calls) / calls * 1e6,
            "committing": timeit.timeit(lambda: committing(path), number=calls) / calls * 1e6,
        }


def _index(version: Version, scratch: Path) -> Path:
    (scratch / "work").mkdir(parents=True)
    manual = scratch / "work" / "manual.md"
    manual.write_text(
        "\n\n".join(
            f"## Valve {n}\n\nValve {n} of the cooling loop is checked every {n % 9 + 1} days."
            for n in range(SECTIONS)
        )
    )
    index = scratch / "index"
    done = run(version.cli("ingest", str(manual), "--index", str(index), "--quiet"), version.env())
    if done.returncode != 0:
        raise SystemExit(f"ingest failed:\n{done.stderr}")
    shutil.copy(manual, scratch / "first.md")
    return index


def _timed(
    version: Version, index: Path, searches: int, *, snapshots: bool
) -> dict[str, list[float]]:
    command = [sys.executable, "-c", TIMED, str(index), str(searches)]
    manual = str(index.parent / "first.md")
    done = run([*command, manual, "1" if snapshots else "0"], compiled_env(version))
    if done.returncode != 0:
        raise SystemExit(f"{version.name} failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    raise SystemExit(main())
