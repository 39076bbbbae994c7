"""Two speakers on two channels (as call recorders write them): the downmix against
each channel transcribed alone.

Run from the repository root::

    python benchmarks/stereo_speakers.py [--overlaps 0,1,2.5,full] [--leak-db N]
        [--baseline-ref REF] [--margins 3,6,10]
    python benchmarks/stereo_speakers.py --held-out

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
envelopes (:mod:`llama_index_video.reader.channels` splits under 0.5), the seconds and,
for ``package``, the share of B's words found under ``SPEAKER_1`` and of A's under
``SPEAKER_2``. ``--leak-db N``: each voice also reaches the other channel N dB under and
2 ms later (:func:`leaked`: two people in one room, a microphone each).
``--baseline-ref REF`` adds a ``baseline`` row: the file read by the package at that git
ref (before 32b7c5c, channels split kept the other voice's leak). ``--margins 3,6,10``
adds a row per loudness margin: each channel's words from ``per channel`` kept where it
is the louder one at that margin (:func:`llama_index_video.reader.channels.louder_only`;
the package's 6 dB was chosen with it on overlaps 0 and 2.5 s, leakage none, 20 and
12 dB, and is reported on overlaps 1 s and ``full``).

``--held-out``: the split decision (:func:`llama_index_video.reader.channels.two_voices`,
its bars chosen on the pair above) on stereo files it was not chosen on, no speech
recognition. To split: other pairs of real voices, one a channel (a man and a woman
reading, another language on each side, two voices recorded in a meeting room; turns
taking over from each other, overlapping, or all at once; one side 12 or 20 dB quieter;
each voice leaking into the other's microphone; a file recorded a reader a channel,
``benchmarks/stereo/two_readers.flac``). To stay mixed: one real recording on
both channels as two microphones would hear it (:func:`two_microphones`: one side
delayed 1-30 ms, quieter, low-passed, with noise and a room of its own; the simulation is
synthetic, the speech real): single readers, a voice recorded in a meeting room, and a
phone call of two women mixed to one. Printed per file: the envelopes' correlation, the
decision and whether it is the right one.
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

from benchmarks.baseline import load_average, measured_in, release  # noqa: E402
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


def two_microphones(
    samples: np.ndarray,
    *,
    delay_ms: float = 0.0,
    gain_db: float = 0.0,
    lowpass_hz: float | None = None,
    snr_db: float | None = None,
    reverb_s: float | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` as two microphones hear one sound: the right one ``delay_ms`` later,
    ``gain_db`` louder (negative: quieter), low-passed at ``lowpass_hz`` (cut in the
    spectrum), each with white noise of its own ``snr_db`` under the sound and, with
    ``reverb_s``, a room's echo of its own (:func:`echoed`)."""
    if reverb_s is not None:
        heard = [echoed(samples, reverb_s=reverb_s, seed=seed + side) for side in (1, 2)]
        left, right = two_microphones(heard[0], snr_db=snr_db, seed=seed)[0], heard[1]
        return left, two_microphones(
            right,
            delay_ms=delay_ms,
            gain_db=gain_db,
            lowpass_hz=lowpass_hz,
            snr_db=snr_db,
            seed=seed,
        )[1]
    right = np.concatenate([np.zeros(round(delay_ms * RATE / 1000), np.float32), samples])
    right = right[: len(samples)] * np.float32(10 ** (gain_db / 20))
    if lowpass_hz is not None:
        spectrum = np.fft.rfft(right)
        spectrum[np.fft.rfftfreq(len(right), 1 / RATE) > lowpass_hz] = 0
        right = np.fft.irfft(spectrum, len(right)).astype(np.float32)
    left = samples.astype(np.float32)
    if snr_db is not None:
        noise = np.random.default_rng(seed).normal(size=(2, len(samples))).astype(np.float32)
        scale = np.sqrt(np.mean(np.square(samples))) * 10 ** (-snr_db / 20)
        left, right = left + scale * noise[0], right + scale * noise[1]
    return left, right


def leaked(left: np.ndarray, right: np.ndarray, *, db: float) -> tuple[np.ndarray, np.ndarray]:
    """Two voices, one a microphone, each also reaching the other's microphone ``db``
    under and 2 ms later (two people in one room)."""
    heard = [two_microphones(side, delay_ms=2.0, gain_db=-db) for side in (left, right)]
    return heard[0][0] + heard[1][1], heard[1][0] + heard[0][1]


def echoed(samples: np.ndarray, *, reverb_s: float, seed: int) -> np.ndarray:
    """``samples`` as a microphone in a room hears them: the direct sound plus as much
    energy again in echoes, noise fading by 60 dB over ``reverb_s`` seconds."""
    taps = int(reverb_s * RATE)
    response = np.random.default_rng(seed).normal(size=taps) * np.exp(
        -6.91 * np.arange(taps) / taps
    )
    response /= np.sqrt(np.sum(np.square(response)))
    response[0] += 1.0
    size = len(samples) + taps
    heard = np.fft.irfft(np.fft.rfft(samples, size) * np.fft.rfft(response, size), size)
    return heard[: len(samples)].astype(np.float32)


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


REAL = ROOT / "tests" / "fixtures"
MICROPHONES = {
    "1 ms later": {"delay_ms": 1.0},
    "30 ms later, 6 dB quieter": {"delay_ms": 30.0, "gain_db": -6.0},
    "10 ms later, low-passed at 1 kHz": {"delay_ms": 10.0, "lowpass_hz": 1000.0},
    "5 ms later, 12 dB quieter, noise 15 dB under": {
        "delay_ms": 5.0,
        "gain_db": -12.0,
        "snr_db": 15.0,
    },
    "in a room echoing for 0.6 s, 15 ms later": {"reverb_s": 0.6, "delay_ms": 15.0},
    "20 ms later, 3 kHz low-pass, 20 dB quieter, noise 20 dB under": {
        "delay_ms": 20.0,
        "lowpass_hz": 3000.0,
        "gain_db": -20.0,
        "snr_db": 20.0,
    },
}
"""The second microphone of each one-voice file (:func:`two_microphones`)."""


def held_out_files() -> list[tuple[str, bool, np.ndarray, np.ndarray]]:
    """``(what, should split, left, right)`` of each held-out stereo file."""
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks

    man = sentences(
        ROOT / "benchmarks/long_real/amateur_reader.opus",
        ROOT / "benchmarks/long_real/amateur_reader.json",
        "turns",
        skip=20,
        seconds=40,
    )
    woman = sentences(
        ROOT / "benchmarks/long_real/lj_reader_next.opus",
        ROOT / "benchmarks/long_real/lj_reader_next.json",
        "turns",
        skip=20,
        seconds=40,
    )
    one = {
        name: decode_audio(REAL / path)
        for name, path in {
            "Spanish reader (MLS)": "real_languages/es_mls.opus",
            "German speaker (FLEURS)": "real_languages/de_fleurs.ogg",
            "Portuguese speaker (FLEURS)": "real_languages/pt_fleurs.ogg",
            "Japanese speaker (FLEURS)": "real_languages/ja_fleurs.flac",
            "a man in a meeting room (AMI)": "real_speech/ami_trn03.flac",
            "a woman in a meeting room (AMI)": "real_speech/ami_trn05.flac",
            "a phone call of two women, mixed": "real_speech/phone_call_2f.flac",
        }.items()
    }
    files = []
    for shown, overlap in (("taking turns", 0.0), ("overlapping 1 s", 1.0), ("all at once", None)):
        left, right = conversation(man, woman, overlap)
        files.append((f"man / woman reading, {shown}", True, left, right))
    left, right = conversation(man, woman, 1.0)
    for db in (12, 20):
        files.append((f"man / woman, woman {db} dB quieter", True, left, right * 10 ** (-db / 20)))
    for db in (20, 12, 6):
        files.append(
            (
                f"man / woman, each leaking {db} dB under into the other's microphone",
                True,
                *leaked(left, right, db=db),
            )
        )
    for a, b in (
        ("Spanish reader (MLS)", "German speaker (FLEURS)"),
        ("Portuguese speaker (FLEURS)", "Japanese speaker (FLEURS)"),
        ("a man in a meeting room (AMI)", "a woman in a meeting room (AMI)"),
    ):
        for shown, overlap in (("overlapping 1 s", 1.0), ("all at once", None)):
            left, right = conversation([(one[a], "")], [(one[b], "")], overlap)
            files.append((f"{a} / {b}, {shown}", True, left, right))
    stereo = ROOT / "benchmarks" / "stereo" / "two_readers.flac"
    files.append(
        (
            "two readers recorded a channel each (faster-whisper's stereo test file)",
            True,
            *tuple(
                np.concatenate(
                    [c.samples for c in iter_audio_chunks(stereo, track=1, channel=side)]
                )
                for side in (0, 1)
            ),
        )
    )
    voices = {
        "man reading (amateur)": np.concatenate([s for s, _ in man]),
        "woman reading (LJ Speech)": np.concatenate([s for s, _ in woman]),
        **one,
    }
    for name, samples in voices.items():
        for shown, options in MICROPHONES.items():
            files.append((f"{name}: {shown}", False, *two_microphones(samples, **options)))
    return files


def held_out() -> None:
    """The split decision on the held-out files (see the module docstring)."""
    from llama_index_video.media.probe import probe
    from llama_index_video.reader.channels import (
        MAX_ENVELOPE_CORRELATION,
        loudness_envelope,
        two_voices,
    )

    print(f"load {load_average()}; split under {MAX_ENVELOPE_CORRELATION} envelope correlation")
    right = {True: [0, 0], False: [0, 0]}
    with tempfile.TemporaryDirectory() as folder:
        for what, should, left, other in held_out_files():
            path = write_stereo(Path(folder) / "held_out.wav", left, other)
            envelopes = float(np.corrcoef(loudness_envelope(left), loudness_envelope(other))[0, 1])
            split = two_voices(probe(path), track=1) is not None
            right[should][0] += split == should
            right[should][1] += 1
            print(
                f"{'split' if split else 'mixed':5} {'ok ' if split == should else 'WRONG'} "
                f"{envelopes:5.2f}  {what}"
            )
    print(
        f"two voices split: {right[True][0]}/{right[True][1]}; "
        f"one sound kept mixed: {right[False][0]}/{right[False][1]}"
    )
    print(f"load {load_average()}")


READ_LABELLED = """
import json, tempfile
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.schema import SPEAKER
with tempfile.TemporaryDirectory() as folder:
    nodes = VideoReader(media_dir=folder, frames=None).read({path!r}).nodes
print(json.dumps([[n.metadata.get(SPEAKER), n.text] for n in nodes]))
"""
"""Each unit's ``(speaker, text)`` as another version of the package reads ``path``
(run by :func:`benchmarks.baseline.measured_in`)."""


UNLABELLED = ("downmix", "per channel")
"""The layouts whose text is not split by speaker."""


def kept_louder(each: list, loudness: list, *, margin_db: float) -> list[str]:
    """Each channel's words where it is the louder one at ``margin_db``
    (:func:`llama_index_video.reader.channels.louder_only`), as text."""
    from llama_index_video.reader import channels

    chosen, channels.LEAK_MARGIN_DB = channels.LEAK_MARGIN_DB, margin_db
    try:
        return [
            " ".join(
                s.text for s in channels.louder_only(each[side], loudness[side], loudness[1 - side])
            )
            for side in (0, 1)
        ]
    finally:
        channels.LEAK_MARGIN_DB = chosen


def by_speaker(labelled: list) -> list[str]:
    """The text of ``SPEAKER_1``'s units and of ``SPEAKER_2``'s."""
    return [
        " ".join(text for speaker, text in labelled if speaker == label)
        for label in ("SPEAKER_1", "SPEAKER_2")
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--overlaps", default="0,1,2.5,full")
    parser.add_argument("--held-out", action="store_true", help="the split decision on other files")
    parser.add_argument(
        "--leak-db", type=float, help="each voice also on the other channel, so far under"
    )
    parser.add_argument("--baseline-ref", help="also read with the package of this git ref")
    parser.add_argument(
        "--margins", help="also each channel's words kept at these loudness margins (dB, 6,12)"
    )
    args = parser.parse_args()
    if args.held_out:
        held_out()
        return

    from llama_index_video.media.audio import decode_audio
    from llama_index_video.media.probe import probe
    from llama_index_video.reader.channels import channel_loudness, loudness_envelope
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.schema import SPEAKER
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    left = sentences(LEFT, LEFT.with_suffix(".json"), "sentences", skip=0, seconds=30)
    right = sentences(RIGHT, RIGHT.with_suffix(".json"), "turns", skip=1, seconds=25)
    said = [" ".join(t for _, t in side) for side in (left, right)]
    transcriber = FasterWhisperTranscriber()
    baseline = release(args.baseline_ref) if args.baseline_ref else None
    margins = [float(m) for m in args.margins.split(",")] if args.margins else []
    print(f"load {load_average()}; leak {args.leak_db} dB; baseline {baseline and baseline.name}")
    print("overlap   layout        A recall  B recall  words  env.corr  seconds  B as 1 / A as 2")
    with tempfile.TemporaryDirectory() as folder:
        for shown in args.overlaps.split(","):
            overlap = None if shown == "full" else float(shown)
            channels = conversation(left, right, overlap)
            if args.leak_db is not None:
                channels = leaked(*channels, db=args.leak_db)
            path = write_stereo(Path(folder) / "call.wav", *channels)
            envelopes = float(
                np.corrcoef(loudness_envelope(channels[0]), loudness_envelope(channels[1]))[0, 1]
            )
            started = time.perf_counter()
            mixed = heard(transcriber, decode_audio(path))
            mixed_s = time.perf_counter() - started
            started = time.perf_counter()
            each = [heard(transcriber, channel) for channel in channels]
            alone = sorted([s for side in each for s in side], key=lambda s: s.start)
            alone_s = time.perf_counter() - started
            started = time.perf_counter()
            reader = VideoReader(media_dir=folder, transcriber=transcriber, frames=None)
            units = reader.read(path).nodes
            package_s = time.perf_counter() - started
            labelled = [(n.metadata.get(SPEAKER), n.text) for n in units]
            texts = [" ".join(s.text for s in mixed)] * 2, [" ".join(s.text for s in alone)] * 2
            rows = [
                ("downmix", texts[0], mixed_s),
                ("per channel", texts[1], alone_s),
                ("package", by_speaker(labelled), package_s),
            ]
            loudness = [channel_loudness(probe(path), track=1, channel=side) for side in (0, 1)]
            for margin in margins:
                kept = kept_louder(each, loudness, margin_db=margin)
                rows.append((f"margin {margin:g} dB", kept, 0.0))
            if baseline is not None:
                started = time.perf_counter()
                before = measured_in(baseline, READ_LABELLED.format(path=str(path)))
                rows.append(("baseline", by_speaker(before), time.perf_counter() - started))
            for layout, (text, other), spent in rows:
                recalls = [in_order_recall(said[0], text), in_order_recall(said[1], other)]
                written = len(normalise_words(text)) + (
                    len(normalise_words(other)) if layout not in UNLABELLED else 0
                )
                # The other speaker's words under each label: what leakage repeats.
                wrong = (
                    f"{in_order_recall(said[1], text):.3f} / {in_order_recall(said[0], other):.3f}"
                    if layout not in UNLABELLED
                    else ""
                )
                print(
                    f"{shown:9} {layout:13} {recalls[0]:8.3f}  {recalls[1]:8.3f}  "
                    f"{written:5d}  {envelopes:5.2f}  {spent:7.1f}  {wrong}"
                )
    print(f"reference words: A {len(normalise_words(said[0]))}, B {len(normalise_words(said[1]))}")


if __name__ == "__main__":
    main()
