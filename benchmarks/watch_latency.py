"""How soon ``watch`` makes a dropped file searchable, and removes a deleted one (issue 37).

A :class:`~llama_index_video.watch.FolderWatcher` runs over a fresh index (default
reader: faster-whisper tiny.en, the local embedding) and this script, in the same run:

1. copies ``examples/media/team_sync.mp3`` (40 s, synthetic espeak-ng voices) into the
   folder, and times copy complete -> ingest started (what watching adds: settling and
   noticing) and -> indexed, beside a plain ``VideoIndex.ingest`` of the same file into
   another index at the end of the run, its models loaded as the watcher's were (the
   baseline: the ingest a user would otherwise run by hand);
2. drops ``--burst`` Markdown notes at once and times until all are indexed, counting
   files ingested more than once;
3. deletes the recording and times until its moments are gone.

Targets: searchable <= 10 s after the copy completes plus its ingest time; every file
of the burst indexed once; a removed file's moments gone <= 10 s after.

    python benchmarks/watch_latency.py [--burst 100] [--settle 2] [--poll SECONDS]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402
from llama_index_video.reader.video_reader import VideoReader  # noqa: E402
from llama_index_video.watch import FolderWatcher, WatchEvent  # noqa: E402

RECORDING = ROOT / "examples" / "media" / "team_sync.mp3"
LIMIT_SECONDS = 600.0


def until(events: list[tuple[float, WatchEvent]], done, what: str) -> float:
    deadline = time.monotonic() + LIMIT_SECONDS
    while True:
        for at, event in list(events):
            if done(event):
                return at
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not seen in {LIMIT_SECONDS:g} s")
        time.sleep(0.02)


def reader(folder: Path) -> VideoReader:
    return VideoReader(media_dir=folder / "media", frames=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--settle", type=float, default=2.0)
    parser.add_argument("--poll", type=float, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="watch_latency_"))
    try:
        folder = work / "drop"
        folder.mkdir()
        index = VideoIndex(work / "index", reader=reader(work / "index"))
        events: list[tuple[float, WatchEvent]] = []
        ingests: list[float] = []
        ingest = index.ingest

        def timed_ingest(*a, **k):  # note when each of the watcher's ingest runs starts
            ingests.append(time.monotonic())
            return ingest(*a, **k)

        index.ingest = timed_ingest  # type: ignore[method-assign]
        watcher = FolderWatcher(
            index,
            [folder],
            settle=args.settle,
            poll=args.poll,
            report=lambda e: events.append((time.monotonic(), e)),
        )
        stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
        thread.start()
        time.sleep(1.0)  # the first look at the empty folder

        target = folder / RECORDING.name
        shutil.copy(RECORDING, target)
        copied = time.monotonic()
        indexed = until(events, lambda e: e.path == target and e.action == "indexed", "recording")
        ingest_start = next(t for t in ingests if t >= copied)
        hits = index.search("security checklist before Friday", top_k=1)
        found = bool(hits) and hits[0].source == str(target)

        notes = [folder / f"note_{n:03d}.md" for n in range(args.burst)]
        dropped = time.monotonic()
        for n, note in enumerate(notes):
            note.write_text(f"# Note {n}\n\nItem {n} of the burst: the {n}th checklist.\n")
        deadline = time.monotonic() + LIMIT_SECONDS
        while len({e.path for _, e in events if e.action == "indexed"} & set(notes)) < len(notes):
            if time.monotonic() > deadline:
                raise SystemExit(f"burst: not all indexed in {LIMIT_SECONDS:g} s")
            time.sleep(0.05)
        last = max(at for at, e in events if e.action == "indexed" and e.path in notes)
        time.sleep(args.settle + 2)  # a duplicate would come now
        counts = Counter(e.path for _, e in events if e.action == "indexed" and e.path in notes)

        os.unlink(target)
        deleted = time.monotonic()
        removed = until(events, lambda e: e.path == target and e.action == "removed", "removal")
        gone = not any(e.source == str(target) for e in index.library())
        stop.set()
        thread.join(timeout=60)
        index.close()

        # The baseline, after the watcher, so its models are loaded too (as the watcher's were).
        baseline = VideoIndex(work / "baseline", reader=reader(work / "baseline"))
        started = time.monotonic()
        assert baseline.ingest([RECORDING]).ok
        by_hand = time.monotonic() - started
        baseline.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    mode = f"poll {args.poll:g} s" if args.poll else "file events"
    print(f"watch latency, settle {args.settle:g} s, {mode}; load {load_average()}")
    print(f"{RECORDING.name} (40 s, synthetic voices), tiny.en + local embedding:")
    print(f"  baseline, VideoIndex.ingest by hand (models loaded): {by_hand:6.1f} s")
    print(f"  copy complete -> watcher's ingest starts: {ingest_start - copied:6.1f} s")
    print(f"  copy complete -> indexed: {indexed - copied:6.1f} s (searchable: {found})")
    print(f"  what watching adds to the ingest: {indexed - copied - by_hand:6.1f} s")
    print(
        f"burst of {len(notes)} notes: all indexed {last - dropped:.1f} s after the drop; "
        f"{len(counts)} distinct, {sum(c > 1 for c in counts.values())} ingested twice"
    )
    print(f"deleted -> removed: {removed - deleted:.1f} s (moments gone: {gone})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
