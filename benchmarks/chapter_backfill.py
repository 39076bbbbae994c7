"""What ``verify --repair`` costs to give an index built without chapters its chapters.

    python benchmarks/chapter_backfill.py [--meeting ES2002b]

One real meeting transcript of ``benchmarks/meetings/`` (QMSum, synthetic timing: each
turn read at 2.6 words a second) becomes a silent WAV with the turns as a sidecar
subtitle file, so no speech recognition runs. It is ingested by a run that makes no
chapters (an index from before them); then ``verify`` (which finds it) and ``verify
--repair`` (which makes its chapters from the stored units and vectors) are timed. The
baseline in the same run is that ingest itself: the least a re-ingest would cost
(a real recording is also transcribed again, minutes of CPU per hour of speech).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import wave
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meetings import load  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meeting", default="ES2002b")
    args = parser.parse_args(argv)
    from llama_index_video.index import VideoIndex
    from llama_index_video.media.export_subtitles import Cue, srt_text

    meeting = load(args.meeting)
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="backfill-") as scratch:
        folder = Path(scratch)
        audio = folder / f"{args.meeting}.wav"
        with wave.open(str(audio), "wb") as sound:
            sound.setnchannels(1)
            sound.setsampwidth(2)
            sound.setframerate(8000)
            sound.writeframes(bytes(2 * 8000 * int(meeting.length + 5)))
        cues = [Cue(t.start, t.end, t.text or ".") for t in meeting.turns]
        audio.with_suffix(".srt").write_text(srt_text(cues), encoding="utf-8")
        with mock.patch("llama_index_video.chapters.nodes.add_chapters", lambda *a, **k: []):
            index = VideoIndex(folder / "index")
            cpu, wall = time.process_time(), time.perf_counter()
            if not index.ingest([audio]).ok:
                raise RuntimeError(f"{audio}: ingest failed")
            ingest = (time.process_time() - cpu, time.perf_counter() - wall)
            index.close()
        index = VideoIndex(folder / "index")
        cpu, wall = time.process_time(), time.perf_counter()
        check, _ = index.verify()
        found = (time.process_time() - cpu, time.perf_counter() - wall)
        cpu, wall = time.process_time(), time.perf_counter()
        index.verify(repair=True)
        made = (time.process_time() - cpu, time.perf_counter() - wall)
        chapters = index.chapters(audio) or []
        index.close()
    minutes = meeting.length / 60
    print(f"{args.meeting}: {minutes:.0f} min, {len(meeting.turns)} units (synthetic timing)")
    print(f"  ingest without chapters (baseline): {ingest[0]:.1f} CPU s, {ingest[1]:.1f} s")
    print(
        f"  verify, finding {len(check.unchaptered)} without chapters: "
        f"{found[0]:.2f} CPU s, {found[1]:.2f} s"
    )
    print(
        f"  verify --repair, making {len(chapters)} chapters: {made[0]:.2f} CPU s, "
        f"{made[1]:.2f} s ({100 * made[0] / ingest[0]:.0f} % of the ingest's CPU)"
    )
    print(f"load average after: {load_average()}")
    return 0 if chapters else 1


if __name__ == "__main__":
    sys.exit(main())
