"""Exporting a 10 s moment with and without subtitles, in the same run (issue 24).

Run from the repository root (no index needed)::

    python benchmarks/export_speed.py [--rounds 9]

Cuts 10 s of ``examples/media/checkout_deep_dive.mp4`` (640x360, 15 fps, a keyframe
every 5 s) with :func:`llama_index_video.media.export.export_span`: from 10 s (a
keyframe: stream copy) and from 12.3 s (between keyframes: re-encoded), each with no
subtitles, with a soft ``mov_text`` track, re-encoded without subtitles, and with the
subtitles burned in (which always re-encodes). The cues are the narration sentences in
that span from ``examples/media/timeline.json``, as ``ask --export`` would write them.
The variants run in turn in every round, so a busy machine slows them alike; the
median of the rounds is printed with each file's stream durations, and ``uptime``
before and after (the machine is shared, so say so when quoting the figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import av

from llama_index_video.media.export import export_span
from llama_index_video.media.export_subtitles import Cue

ROOT = Path(__file__).resolve().parents[1]
VIDEO = ROOT / "examples" / "media" / "checkout_deep_dive.mp4"
SPANS = {"at a keyframe (10-20 s)": 10.0, "between keyframes (12.3-22.3 s)": 12.3}
VARIANTS: dict[str, dict[str, Any]] = {
    "no subtitles": {},
    "soft track": {"track": True},
    "none, re-encoded": {"mode": "reencode"},  # the baseline of burning in
    "burned in": {"track": True, "burn": True},
}


def narration(start: float, end: float) -> list[Cue]:
    timeline = json.loads((ROOT / "examples" / "media" / "timeline.json").read_text())
    said = timeline["files"][VIDEO.name]["narration"]
    spoken = (Cue(s["start"], s["end"], s["text"]) for s in said)
    return [cue for cue in spoken if cue.end > start and cue.start < end]


def durations(path: Path) -> str:
    with av.open(str(path)) as container:
        return ", ".join(
            f"{s.type} {float(s.duration * s.time_base):.2f} s"
            for s in container.streams
            if s.duration
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout)
    times: dict[tuple[str, str], list[float]] = {}
    last: dict[tuple[str, str], Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):  # ends: after --rounds rounds
            for span, start in SPANS.items():
                cues = narration(start, start + 10)
                for variant, how in VARIANTS.items():
                    output = Path(folder) / f"{start}-{variant.replace(' ', '_')}.mp4"
                    began = time.perf_counter()
                    report = export_span(
                        VIDEO,
                        start,
                        start + 10,
                        output,
                        mode=how.get("mode", "auto"),
                        cues=cues if how.get("track") else (),
                        burn=bool(how.get("burn")),
                    )
                    times.setdefault((span, variant), []).append(time.perf_counter() - began)
                    last[(span, variant)] = (report, durations(output))
        print(f"{'span':34} {'subtitles':16} {'method':9} {'median':>9}  file")
        for (span, variant), samples in times.items():
            report, streams = last[(span, variant)]
            print(
                f"{span:34} {variant:16} {report.method:9} "
                f"{statistics.median(samples) * 1000:6.0f} ms  {streams}"
            )
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout)


if __name__ == "__main__":
    main()
