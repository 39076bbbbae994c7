"""Two speakers on two channels (as call recorders write them): the downmix against
each channel transcribed alone.

Run from the repository root::

    python benchmarks/stereo_speakers.py [--overlaps 0,1,2.5,full]

Material (real speech, both with per-sentence references): the LibriVox reader
(``tests/fixtures/speech/librivox_en.flac``, five sentences, 24.7 s) on the left channel
and LJ Speech's reader (``benchmarks/long_real/lj_reader.opus``, sentences LJ001-0002 on,
up to the same length) on the right. They take turns, A1 B1 A2 B2 ..., each turn starting
``overlap`` seconds before the other's ends (``full``: both talk from 0 s, all the way).

For each overlap the file is transcribed with the default ``FasterWhisperTranscriber``
(tiny.en) mixed to one (16 kHz, the channels mixed by PyAV: what the package did before
it split channels) and each channel alone; then ``VideoReader`` reads it as shipped
(``package``: each unit's words credited to the speaker its label names). Printed per
speaker: the share of its reference words the transcript holds in order (longest common
subsequence of words over the reference's words; the other speaker's words in between
do not count against it), the words written, the correlation of the channels' loudness
envelopes (:mod:`llama_index_video.reader.channels` splits under 0.5) and the seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.multilingual import write_wav  # noqa: E402
from benchmarks.transcription_speed import normalise_words  # noqa: E402

RATE = 16_000
LEFT = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
RIGHT = ROOT / "benchmarks" / "long_real" / "lj_reader.opus"
GAP_S = 0.3  # between turns when they do not overlap


def sentences(audio: Path, reference: Path, key: str, *, skip: int, seconds: float) -> list:
    """``(samples, text)`` of each sentence in ``reference`` (after ``skip``), up to
    ``seconds`` of speech in all."""
    from llama_index_video.media.audio import decode_audio

    samples = decode_audio(audio)
    found, total = [], 0.0
    for turn in json.loads(reference.read_text())[key][skip:]:
        if total >= seconds:
            break
        piece = samples[int(turn["start"] * RATE) : int(turn["end"] * RATE)]
        found.append((piece, turn["text"]))
        total += len(piece) / RATE
    return found


def conversation(left: list, right: list, overlap: float | None) -> tuple[np.ndarray, ...]:
    """The two channels, turns alternating (``None``: each channel's turns back to back
    from 0 s, both at once)."""
    if overlap is None:
        channels = [np.concatenate([s for s, _ in side]) for side in (left, right)]
    else:
        placed: list[tuple[int, int, np.ndarray]] = []
        at = 0.0
        for index in range(max(len(left), len(right))):
            for side, turns in ((0, left), (1, right)):
                if index < len(turns):
                    samples = turns[index][0]
                    placed.append((side, int(at * RATE), samples))
                    at = max(at + 0.5, at + len(samples) / RATE - overlap) + (
                        GAP_S if overlap == 0 else 0.0
                    )
        length = max(start + len(s) for _, start, s in placed)
        channels = [np.zeros(length, np.float32), np.zeros(length, np.float32)]
        for side, start, samples in placed:
            channels[side][start : start + len(samples)] += samples
    length = max(len(c) for c in channels)
    return tuple(np.pad(c, (0, length - len(c))) for c in channels)


def write_stereo(path: Path, left: np.ndarray, right: np.ndarray) -> Path:
    write_wav(path, np.clip(np.stack([left, right], axis=1), -1, 1) * 32767, RATE)
    return path


def in_order_recall(reference: str, hypothesis: str) -> float:
    """Share of ``reference``'s words found in ``hypothesis`` in the same order (LCS)."""
    ref, hyp = normalise_words(reference), normalise_words(hypothesis)
    row = [0] * (len(hyp) + 1)
    for word in ref:
        previous_diagonal = 0
        for j, other in enumerate(hyp, 1):
            here = row[j]
            row[j] = previous_diagonal + 1 if word == other else max(row[j], row[j - 1])
            previous_diagonal = here
    return row[-1] / len(ref) if ref else 1.0


def heard(transcriber, samples: np.ndarray) -> list:
    return list(transcriber.transcribe(samples).segments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--overlaps", default="0,1,2.5,full")
    args = parser.parse_args()

    from llama_index_video.media.audio import decode_audio
    from llama_index_video.reader.channels import loudness_envelope
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.schema import SPEAKER
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    left = sentences(LEFT, LEFT.with_suffix(".json"), "sentences", skip=0, seconds=30)
    right = sentences(RIGHT, RIGHT.with_suffix(".json"), "turns", skip=1, seconds=25)
    said = [" ".join(t for _, t in side) for side in (left, right)]
    transcriber = FasterWhisperTranscriber()
    print("overlap   layout        A recall  B recall  words  env.corr  seconds")
    with tempfile.TemporaryDirectory() as folder:
        for shown in args.overlaps.split(","):
            overlap = None if shown == "full" else float(shown)
            channels = conversation(left, right, overlap)
            path = write_stereo(Path(folder) / "call.wav", *channels)
            envelopes = float(
                np.corrcoef(loudness_envelope(channels[0]), loudness_envelope(channels[1]))[0, 1]
            )
            started = time.perf_counter()
            mixed = heard(transcriber, decode_audio(path))
            mixed_s = time.perf_counter() - started
            started = time.perf_counter()
            alone = sorted(
                [s for channel in channels for s in heard(transcriber, channel)],
                key=lambda s: s.start,
            )
            alone_s = time.perf_counter() - started
            started = time.perf_counter()
            reader = VideoReader(media_dir=folder, transcriber=transcriber, frames=None)
            units = reader.read(path).nodes
            package_s = time.perf_counter() - started
            by_speaker = [
                " ".join(n.text for n in units if n.metadata.get(SPEAKER) == label)
                for label in ("SPEAKER_1", "SPEAKER_2")
            ]
            texts = [" ".join(s.text for s in mixed)] * 2, [" ".join(s.text for s in alone)] * 2
            for layout, (text, other), spent in (
                ("downmix", texts[0], mixed_s),
                ("per channel", texts[1], alone_s),
                ("package", by_speaker, package_s),
            ):
                recalls = [in_order_recall(said[0], text), in_order_recall(said[1], other)]
                written = len(normalise_words(text)) + (
                    len(normalise_words(other)) if layout == "package" else 0
                )
                print(
                    f"{shown:9} {layout:13} {recalls[0]:8.3f}  {recalls[1]:8.3f}  "
                    f"{written:5d}  {envelopes:5.2f}  {spent:7.1f}"
                )
    print(f"reference words: A {len(normalise_words(said[0]))}, B {len(normalise_words(said[1]))}")


if __name__ == "__main__":
    main()
