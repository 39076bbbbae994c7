"""Long recordings of real human speech with a reference transcript (issue 36).

    python benchmarks/long_real_speech.py --from NAME=CHECKOUT [--from ...]

Each recording of :data:`RECORDINGS` is **real speech, but not a real long recording**:
the consecutive clips of one reader (LJ Speech ids in order, so the sentences of a book
read one after another), each clip as recorded, joined end to end with
:data:`PAUSE_SECONDS` of silence between them (the clips were cut at the reader's own
pauses, which are lost). The reference is each clip's transcript, at the clip's place on
the joined timeline.

The recordings and their references are kept in ``benchmarks/long_real/`` (Opus, 16 kHz
mono, :data:`BITRATE` bit/s: lossy, a few MB), so a fresh clone measures them with no
download. This script rebuilds them from checkouts of the source repositories (named by
repository and commit in each JSON), for anyone who wants to check what was joined.

:data:`HOUR` is the kept recordings of :data:`RECORDINGS` joined end to end (62 minutes,
two readers), made by :func:`joined` from the kept files into a cache folder, so an hour
of real speech costs the repository nothing more.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FOLDER: Final = ROOT / "benchmarks" / "long_real"
SAMPLE_RATE: Final = 16000
PAUSE_SECONDS: Final = 0.5
BITRATE: Final = 16000


@dataclass(frozen=True)
class Source:
    """Where one recording's clips come from."""

    name: str
    repository: str
    commit: str
    wavs: str
    transcripts: str
    reader: str
    licence: str
    first: str = ""
    """The first clip joined (by id; the clips before it are left out)."""


RECORDINGS: Final = (
    Source(
        name="lj_reader",
        repository="github.com/Aliaa-Kashwa/Deep-learning-based-end-to-end-speech-recognition",
        commit="ac5950f9a87e754e655ba32db1d98598b22ac0c7",
        wavs="wavs",
        transcripts="labels.csv",
        reader="LJ Speech's reader (LibriVox, one woman, American English): the dataset's "
        "own clips LJ001-0001 to LJ001-0100, 22.05 kHz",
        licence="public domain (LJ Speech 1.1: LibriVox recordings of public-domain texts; "
        "keithito.com/LJ-Speech-Dataset)",
    ),
    Source(
        name="amateur_reader",
        repository="github.com/PhilippMatthes/dc_tts",
        commit="5f20e75b5c454b22f9f7dcaa2f7282bada93c1eb",
        wavs="LJSpeech-1.1/wavs",
        transcripts="LJSpeech-1.1/transcript.csv",
        reader="one man, a non-native English speaker, reading 141 LJ Speech sentences "
        "(LJ001-0001 to LJ003-0098, with gaps) into a desktop microphone at 44.1 kHz; "
        "added to the repository by its author in July 2019 ('Add recorded wavs')",
        licence="Apache-2.0 (the repository's LICENSE, dc_tts by Kyubyong Park, to which "
        "the recordings were committed); the sentences are LJ Speech's public-domain text",
    ),
    Source(
        name="lj_reader_next",
        repository="github.com/PrernaSocity/lj_speech_dataset_part_1",
        commit="328134a60409b5d1060f411fde6fa0eb20b22150",
        wavs="LJSpeech-1.1/wavs",
        transcripts="LJSpeech-1.1/metadata.csv",
        reader="LJ Speech's reader (LibriVox, one woman, American English): the dataset's "
        "own clips LJ001-0101 to LJ002-0200 (285 clips, the ones after lj_reader's), 22.05 kHz",
        licence="public domain (LJ Speech 1.1, the dataset's README kept beside the clips: "
        "LibriVox recordings of public-domain texts; keithito.com/LJ-Speech-Dataset)",
        first="LJ001-0101",
    ),
)
HOUR: Final = ("lj_reader", "lj_reader_next", "amateur_reader")
"""The recordings :func:`joined` joins into an hour of real speech, in this order."""


@dataclass(frozen=True)
class Turn:
    """One clip on the joined timeline and what it says."""

    id: str
    start: float
    end: float
    text: str


def load_recording(name: str) -> tuple[Path, list[Turn]]:
    """The kept recording ``name`` and its reference turns."""
    described = json.loads((FOLDER / f"{name}.json").read_text())
    turns = [Turn(t["id"], t["start"], t["end"], t["text"]) for t in described["turns"]]
    return FOLDER / described["audio"], turns


def joined(names: Sequence[str], cache: Path) -> tuple[Path, list[Turn]]:
    """The kept recordings ``names`` joined end to end with :data:`PAUSE_SECONDS` of
    silence between them (a WAV in ``cache``, made once), and their turns moved onto the
    joined timeline, each id prefixed with its recording's name (two readings of one book
    share clip ids)."""
    from faster_whisper.audio import decode_audio

    audio = cache / f"{'+'.join(names)}.wav"
    turns: list[Turn] = []
    pieces: list[np.ndarray] = []
    at = 0
    pause = np.zeros(round(PAUSE_SECONDS * SAMPLE_RATE), dtype=np.float32)
    for name in names:
        kept, own = load_recording(name)
        samples = decode_audio(str(kept), sampling_rate=SAMPLE_RATE)
        shift = at / SAMPLE_RATE
        turns += [Turn(f"{name}/{t.id}", t.start + shift, t.end + shift, t.text) for t in own]
        pieces += [samples, pause]
        at += len(samples) + len(pause)
    if not audio.is_file():
        import wave

        cache.mkdir(parents=True, exist_ok=True)
        pcm = (np.clip(np.concatenate(pieces), -1.0, 1.0) * 32767).astype("<i2")
        partial = audio.with_suffix(".part")
        with wave.open(str(partial), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(SAMPLE_RATE)
            out.writeframes(pcm.tobytes())
        partial.replace(audio)
    return audio, turns


def assemble(source: Source, checkout: Path) -> None:
    """Join ``source``'s clips from ``checkout`` (at its commit) into the kept files."""
    from faster_whisper.audio import decode_audio

    texts = _transcripts(checkout / source.transcripts)
    clips = [c for c in sorted((checkout / source.wavs).glob("LJ*.wav")) if c.stem >= source.first]
    pause = np.zeros(round(PAUSE_SECONDS * SAMPLE_RATE), dtype=np.float32)
    pieces: list[np.ndarray] = []
    turns: list[dict[str, float | str]] = []
    at = 0
    for clip in clips:
        samples = decode_audio(str(clip), sampling_rate=SAMPLE_RATE)
        turns.append(
            {
                "id": clip.stem,
                "start": round(at / SAMPLE_RATE, 3),
                "end": round((at + len(samples)) / SAMPLE_RATE, 3),
                "text": texts[clip.stem],
            }
        )
        pieces += [samples, pause]
        at += len(samples) + len(pause)
    audio = f"{source.name}.opus"
    _write_opus(np.concatenate(pieces), FOLDER / audio)
    described = {
        "kind": "real",
        "description": f"{at / SAMPLE_RATE / 60:.1f} min: {len(clips)} clips of one reader "
        f"joined in id order with {PAUSE_SECONDS} s of silence between them (real speech, "
        "not a real long recording). Reader: " + source.reader,
        "source": f"{source.repository} at {source.commit}: {source.wavs}/*.wav; "
        f"reference: {source.transcripts} (LJ Speech's normalised transcription)",
        "licence": source.licence,
        "audio": audio,
        "turns": turns,
    }
    (FOLDER / f"{source.name}.json").write_text(json.dumps(described, indent=1) + "\n")


def _transcripts(path: Path) -> dict[str, str]:
    """LJ Speech metadata (``id|text|normalised text``): the normalised text by id."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.reader(handle, delimiter="|", quoting=csv.QUOTE_NONE)
        return {row[0]: row[2].rstrip(",").strip() for row in rows if len(row) >= 3}


def _write_opus(samples: np.ndarray, path: Path) -> None:
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16)
    with av.open(str(path), "w", format="ogg") as container:
        stream = container.add_stream("libopus", rate=SAMPLE_RATE, layout="mono")
        stream.bit_rate = BITRATE
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--from",
        dest="sources",
        action="append",
        required=True,
        metavar="NAME=CHECKOUT",
        help="a checkout of a recording's repository at its commit, NAME one of "
        + ", ".join(source.name for source in RECORDINGS),
    )
    args = parser.parse_args(argv)
    known = {source.name: source for source in RECORDINGS}
    for given in args.sources:
        name, _, checkout = given.partition("=")
        if name not in known or not checkout:
            parser.error(f"--from takes NAME=CHECKOUT with NAME one of {sorted(known)}: {given}")
        assemble(known[name], Path(checkout))
        print(f"{name}: {FOLDER / name}.opus", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
