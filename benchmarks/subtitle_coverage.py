"""A subtitle track that covers part of a recording, against a baseline in the same run.

Run from the repository root::

    python benchmarks/subtitle_coverage.py [--baseline-ref 8896006]

Two Matroska files of real speech (the LibriVox reading, ``tests/fixtures/speech/
librivox_en.flac``, five sentences with their times), each with a SubRip track:

- ``partial``: cues for the first two sentences only (0.2-9.8 s of 24.7 s). Scored: the
  share of the other three sentences' words the transcript holds in order (tiny.en), and
  the transcript units that start after the cues.
- ``covered``: the reading 24 times over (9.9 min), a cue for every sentence. Scored: the
  CPU seconds reading it takes (no speech to transcribe: the transcriber refuses), which
  is what looking for speech outside the cues costs a file whose track covers it.

Each version reads in a child process with its own package first on ``sys.path``
(:mod:`benchmarks.baseline`); the baseline defaults to the commit before subtitles
stopped replacing all the speech.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average, measured_in, release, today  # noqa: E402

LIBRIVOX = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
SENTENCES = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"]
REPEATS = 24

READ = """
import json, time
from pathlib import Path
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.faster import FasterWhisperTranscriber
from benchmarks.stereo_speakers import in_order_recall

class Refusing:
    name = "refusing"
    def transcribe(self, audio, *, source=None):
        raise AssertionError("nothing to transcribe")

folder = Path({folder!r})
partial = VideoReader(media_dir=folder / "m1", transcriber=FasterWhisperTranscriber(),
                      frames=None).read(folder / "partial.mkv")
after = [n for n in partial.nodes if n.metadata["start_s"] > {cues_end}]
started = time.process_time()
VideoReader(media_dir=folder / "m2", transcriber=Refusing(), frames=None).read(
    folder / "covered.mkv")
print(json.dumps({{
    "recall": in_order_recall({said!r}, " ".join(n.text for n in after)),
    "after": len(after),
    "covered_cpu_s": time.process_time() - started,
}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-ref", default="8896006")
    args = parser.parse_args()

    from llama_index_video.media.audio import decode_audio
    from tests.reader.muxed import write_mkv

    reading = decode_audio(LIBRIVOX)
    cues = [(s["start"], s["end"], s["text"]) for s in SENTENCES]
    seconds = len(reading) / 16_000
    said = " ".join(s["text"] for s in SENTENCES[2:])
    print(f"load {load_average()}")
    print("version                 words after the cues  units after  covered 9.9 min: CPU s")
    with tempfile.TemporaryDirectory() as folder:
        write_mkv(Path(folder) / "partial.mkv", [reading], cues=cues[:2])
        every = [(a + k * seconds, b + k * seconds, t) for k in range(REPEATS) for a, b, t in cues]
        write_mkv(Path(folder) / "covered.mkv", [np.tile(reading, REPEATS)], cues=every)
        code = READ.format(folder=folder, cues_end=cues[1][1], said=said)
        for version in (release(args.baseline_ref), today()):
            got = measured_in(version, code)
            print(
                f"{version.name:23} {got['recall']:20.3f}  {got['after']:11d}  "
                f"{got['covered_cpu_s']:8.2f}"
            )
    print(f"load {load_average()}")


if __name__ == "__main__":
    main()
