"""A subtitle track that covers part of a recording, against a baseline in the same run.

Run from the repository root::

    python benchmarks/subtitle_coverage.py [--baseline-ref 8896006]
    python benchmarks/subtitle_coverage.py --held-out [--margins 0,0.25,0.5,1]

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

``--held-out``: the cover margin (:data:`~llama_index_video.reader.uncovered.COVER_MARGIN`,
chosen on the LibriVox reading above) on readings it was not chosen on, the three of
``benchmarks/long_real`` (two readers, clips 0.5 s apart), each margin in turn. From each,
pieces of :data:`WINDOW` sentences at :data:`PIECES`; a piece's track has cues (the
sentences' own times) for its first half: scored are the share of the first uncovered
sentence's words the transcript of the speech outside the cues holds in order (where a
margin too wide cuts words) and of all the uncovered sentences' words, with the track on
time and 0.3 s late (as tracks are; the clips are 0.5 s apart). Then a cue for every
sentence, the track 0.3 s early, on time and late: the stretches of speech outside the
cues that would be transcribed (0 is right; a margin too narrow hears a cue's edges).
It calls :func:`~llama_index_video.reader.uncovered.covered` and
:func:`~llama_index_video.reader.uncovered.uncovered_speech` with tiny.en, as the reader
does, on this checkout only.
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
HELD_OUT = ("lj_reader", "lj_reader_next", "amateur_reader")
WINDOW = 10
"""Sentences in a held-out piece; its cues cover the first half."""
PIECES = (0, 40, 80)
"""The first sentence of each piece of a held-out reading."""
OFFSETS = (-0.3, 0.0, 0.3)
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


def pieces() -> list[tuple[str, np.ndarray, list[tuple[float, float, str]]]]:
    """``(name, samples, sentences)`` of each held-out piece, times from its start."""
    from llama_index_video.media.audio import decode_audio

    found = []
    for name in HELD_OUT:
        audio = ROOT / "benchmarks" / "long_real" / f"{name}.opus"
        samples = decode_audio(audio)
        turns = json.loads(audio.with_suffix(".json").read_text())["turns"]
        for first in PIECES:
            said = turns[first : first + WINDOW]
            start, end = said[0]["start"], said[-1]["end"] + 0.5
            piece = samples[int(start * 16_000) : int(end * 16_000)]
            found.append(
                (
                    f"{name}@{first}",
                    piece,
                    [(t["start"] - start, t["end"] - start, t["text"]) for t in said],
                )
            )
    return found


def held_out(margins: list[float]) -> None:
    """The cover margin on the held-out readings (see the module docstring)."""
    from benchmarks.stereo_speakers import in_order_recall
    from llama_index_video.media.audio import AudioChunk
    from llama_index_video.reader import uncovered
    from llama_index_video.transcription.base import Segment
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    transcriber = FasterWhisperTranscriber()
    found = pieces()
    half = WINDOW // 2
    print(f"load {load_average()}; {len(found)} pieces of {WINDOW} sentences")
    print(
        "margin s  first uncovered sentence (on time / late)  uncovered sentences (on time / "
        "late)  stretches with every sentence cued (early / on time / late)"
    )
    for margin in margins:
        uncovered.COVER_MARGIN = margin  # type: ignore[misc]  # the setting measured
        first, rest = [0.0, 0.0], [0.0, 0.0]
        spurious = [0] * len(OFFSETS)
        for _, piece, said in found:
            for k, offset in enumerate(OFFSETS):
                cues = [Segment(a + offset, b + offset, t) for a, b, t in said]
                every = uncovered.covered(cues)
                spurious[k] += len(list(uncovered.uncovered_speech(AudioChunk(0.0, piece), every)))
                if offset < 0:
                    continue
                partial = uncovered.covered(cues[:half])
                heard = " ".join(
                    segment.text
                    for chunk in uncovered.uncovered_speech(AudioChunk(0.0, piece), partial)
                    for segment in transcriber.transcribe(chunk.samples).segments
                )
                at = int(offset > 0)
                first[at] += in_order_recall(said[half][2], heard)
                rest[at] += in_order_recall(" ".join(t for *_, t in said[half:]), heard)
        n = len(found)
        print(
            f"{margin:8.2f}  {first[0] / n:19.3f} / {first[1] / n:.3f}  "
            f"{rest[0] / n:21.3f} / {rest[1] / n:.3f}  {' / '.join(map(str, spurious)):>22}"
        )
    print(f"load {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-ref", default="8896006")
    parser.add_argument("--held-out", action="store_true", help="the margin on other readings")
    parser.add_argument("--margins", default="0,0.25,0.5,1", help="with --held-out, in seconds")
    args = parser.parse_args()
    if args.held_out:
        held_out([float(m) for m in args.margins.split(",")])
        return

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
