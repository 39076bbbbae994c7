"""Names on the wrong voices: two readers named in one recording, looked for in another,
wideband and as a phone bridge records it (8 kHz mono MP3, 16 kbit/s).

With many voices, the diarizer puts some of other people's units under a reader's
label (more so at 8 kHz), and a label matched to a named voice gave the name to all
of its units. Now a unit takes the name only if its own voice is close enough to the
named one (:data:`~llama_index_video.speakers.voices.VOICE_UNIT_THRESHOLD`); this
measures that threshold.

**Fitted here** (``fit``), on real speech that is not in the trial meeting
(``benchmarks/meeting_trial.py``): the readers of ``benchmarks/long_real``
(``amateur_reader`` 10:00-13:00 and ``lj_reader``, another chapter than the trial's, 6:40-10:40)
named in one recording, then looked for in a 17-minute join of the forty FLEURS readings
(``tests/fixtures/fleurs_languages``, native speakers, CC BY 4.0), the five clips of
other languages of ``tests/fixtures/real_languages`` and other stretches of both readers
(``amateur_reader`` 15:00-18:00, ``lj_reader`` 0:00-4:00), as FLAC and as the phone
MP3. Units are the readings' sentences and one per clip (an ``.srt`` beside each file,
so no speech recognition); CAM++ labels the voices for real, the count estimated.

**Held out** (``trial INDEX REFERENCE ENROL``): an index of the trial meeting's
encodings ingested with ``--speakers`` and no names (``benchmarks/package_trial.py
build``), its reference turns (``build`` writes them): the readers named in ``ENROL``
on the label that said most of their units, the others relabelled, each way.

A unit's person is the reference speaker who says most of it. Scored per recording:
the readers' units that carry their name, and the other people's units that carry a
reader's name, with every unit of a matched label named (before) and as the package
names them now.

    python benchmarks/voice_bandwidth.py fit [FOLDER]
    python benchmarks/voice_bandwidth.py trial INDEX REFERENCE ENROL [RECORDING...]
    python benchmarks/voice_bandwidth.py hand INDEX REFERENCE [RECORDING...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meeting_trial import ffmpeg  # noqa: E402
from benchmarks.voice_library import srt_time  # noqa: E402
from benchmarks.voice_matching import Rates, best_of, shown  # noqa: E402
from llama_index_video import schema  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402
from llama_index_video.reader.video_reader import VideoReader  # noqa: E402
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer  # noqa: E402
from llama_index_video.speakers.voices import (  # noqa: E402
    VOICE_UNIT_THRESHOLD,
    best_voice,
    heard_labels,
)
from llama_index_video.store.voice_library import VoiceLibrary  # noqa: E402

LONG = ROOT / "benchmarks" / "long_real"
FLEURS = ROOT / "tests" / "fixtures" / "fleurs_languages"
LANGUAGES = ROOT / "tests" / "fixtures" / "real_languages"
OTHER_LANGUAGES = (
    "es_mls.opus",
    "fr_commonvoice.flac",
    "ja_commonvoice.mp3",
    "zh_aishell1.flac",
    "ar_speech_corpus.flac",
)
GAP_SECONDS = 1.0
PHONE = ("-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "16k")
ENROL = (("amateur_reader", 600.0, 780.0), ("lj_reader", 400.0, 640.0))
LOOKED_FOR = (("amateur_reader", 900.0, 1080.0), ("lj_reader", 0.0, 240.0))
THRESHOLDS = tuple(np.round(np.arange(0.30, 0.80, 0.025), 3))
HAND_THRESHOLDS = tuple(np.round(np.arange(0.40, 0.925, 0.025), 3))
READERS_OF_TRIAL = ("amateur_reader", "lj_reader_next")

Turn = tuple[str, float, float]  # person, start, end


@dataclass(frozen=True)
class Piece:
    path: Path
    start: float  # in the source
    seconds: float


def reading(stem: str, start: float, end: float) -> tuple[Piece, list[Turn]]:
    """A stretch of a long reading and its sentences (seconds from the stretch's start)."""
    sentences = json.loads((LONG / f"{stem}.json").read_text())["turns"]
    turns = [
        (stem, s["start"] - start, s["end"] - start)
        for s in sentences
        if s["start"] >= start and s["end"] <= end
    ]
    return Piece(LONG / f"{stem}.opus", start, end - start), turns


def clip(path: Path) -> tuple[Piece, list[Turn]]:
    """A whole clip of one person, one turn."""
    probe = ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0"]
    seconds = float(subprocess.run([*probe, str(path)], capture_output=True, text=True).stdout)
    return Piece(path, 0.0, seconds), [(path.name, 0.0, seconds)]


def join(pieces: Sequence[tuple[Piece, list[Turn]]], out: Path, *options: str) -> list[Turn]:
    """``pieces`` joined 1 s apart into ``out`` (with an ``.srt`` of their turns); the
    turns on the joined timeline."""
    inputs: list[str] = []
    filters, turns = [], []
    offset = 0.0
    for number, (piece, own) in enumerate(pieces):
        inputs += ["-ss", str(piece.start), "-t", str(piece.seconds), "-i", str(piece.path)]
        mono = "aresample=16000,aformat=channel_layouts=mono"
        whole = piece.seconds + GAP_SECONDS
        filters.append(f"[{number}:a]{mono},apad=whole_dur={whole}[a{number}]")
        turns += [(who, offset + a, offset + b) for who, a, b in own]
        offset += whole
    joined = "".join(f"[a{n}]" for n in range(len(pieces)))
    graph = ";".join(filters) + f";{joined}concat=n={len(pieces)}:v=0:a=1[out]"
    ffmpeg(*inputs, "-filter_complex", graph, "-map", "[out]", *options, str(out))
    cues = [
        f"{i}\n{srt_time(a)} --> {srt_time(b)}\nturn {i}\n" for i, (_, a, b) in enumerate(turns, 1)
    ]
    out.with_suffix(".srt").write_text("\n".join(cues))
    return turns


def build_fit(folder: Path) -> dict[str, list[Turn]]:
    """The fit recordings in ``folder``: ``enrol.flac``, ``fit.flac``, ``fit_phone.mp3``."""
    fleurs = sorted(FLEURS.glob("*.ogg"))
    others = [clip(LANGUAGES / name) for name in OTHER_LANGUAGES]
    first, second = (reading(*stretch) for stretch in LOOKED_FOR)
    meeting = [
        *(clip(p) for p in fleurs[:20]),
        first,
        *(clip(p) for p in fleurs[20:]),
        second,
        *others,
    ]
    return {
        "enrol.flac": join([reading(*stretch) for stretch in ENROL], folder / "enrol.flac"),
        "fit.flac": join(meeting, folder / "fit.flac"),
        "fit_phone.mp3": join(meeting, folder / "fit_phone.mp3", *PHONE),
    }


@dataclass(frozen=True)
class Unit:
    person: str | None
    name: str | None  # the named voice its label matches
    own: float | None  # its own voice's cosine to that named voice


def person_of(turns: Sequence[Turn], start: float, end: float) -> str | None:
    """The reference person who says most of ``[start, end]``."""
    said: dict[str, float] = {}
    for who, a, b in turns:
        if min(end, b) > max(start, a):
            said[who] = said.get(who, 0.0) + min(end, b) - max(start, a)
    return max(said, key=lambda who: said[who]) if said else None


def stored_units(index: VideoIndex, recording: str) -> list[tuple[float, float, str | None]]:
    rows = index.vector_store._collection.get(include=["metadatas"])  # type: ignore[attr-defined]
    return [
        (m[schema.START_S], m[schema.END_S], m.get(schema.SPEAKER))
        for m in rows["metadatas"]
        if m[schema.MODALITY] == "transcript" and Path(m[schema.SOURCE]).name == recording
    ]


def name_readers(index: VideoIndex, enrol: str, turns: Sequence[Turn], readers: Sequence[str]):
    """Each reader named (as themself) on the label that said most of their units."""
    said = [(person_of(turns, a, b), who) for a, b, who in stored_units(index, enrol)]
    for reader in readers:
        labels = [who for person, who in said if person == reader and who]
        label = max(sorted(set(labels)), key=labels.count)
        print(f"  {reader} named on {label} of {enrol} ({labels.count(label)} of {len(labels)})")
        index.name_speaker(enrol, label, reader)


def looked_up(index: VideoIndex, folder: Path, recording: str, turns: Sequence[Turn]) -> list[Unit]:
    """Each unit of ``recording`` with the name its label's voice matches and its own
    voice's cosine to that name (the package's decision functions, computed)."""
    known = VoiceLibrary(index.path).centroids()
    stored = stored_units(index, recording)
    spans: dict[str, list[tuple[float, float]]] = {}
    for a, b, who in stored:
        if who:
            spans.setdefault(who, []).append((a, b))
    found = []
    for label, heard in heard_labels(folder / recording, spans).items():
        name = best_voice(heard.voice, known)
        for (a, b), own in zip(spans[label], heard.units, strict=True):
            cosine = None if name is None or own is None else float(own @ known[name])
            found.append(Unit(person_of(turns, a, b), name, cosine))
    return found


def rates(units: Sequence[Unit], threshold: float, readers: Sequence[str]) -> Rates:
    """(readers' units named right, readers' units, others' units left without a reader's
    name, others' units) when a unit needs ``threshold`` (below -1: every unit named)."""

    def given(unit: Unit) -> str | None:
        passes = unit.own is None or unit.own >= threshold
        return unit.name if unit.name is not None and passes else None

    mine = [u for u in units if u.person in readers]
    others = [u for u in units if u.person is not None and u.person not in readers]
    right = sum(given(u) == u.person for u in mine)
    return right, len(mine), sum(given(u) is None for u in others), len(others)


@dataclass(frozen=True)
class HandUnit:
    person: str | None
    label: str
    named: str  # who the user names its label for: the person who says most of its units
    own: float | None  # its own voice's cosine to its label's


def by_hand(
    index: VideoIndex, folder: Path, recording: str, turns: Sequence[Turn]
) -> list[HandUnit]:
    """Each unit of ``recording`` with its own voice's cosine to its label's, every label
    named by hand for the person who says most of its units (the package's functions)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for a, b, who in stored_units(index, recording):
        if who:
            spans.setdefault(who, []).append((a, b))
    found = []
    for label, heard in heard_labels(folder / recording, spans).items():
        persons = [person_of(turns, a, b) for a, b in spans[label]]
        said = [p for p in persons if p is not None]
        named = max(sorted(set(said)), key=said.count)
        for person, own in zip(persons, heard.units, strict=True):
            cosine = None if own is None else float(own @ heard.voice)
            found.append(HandUnit(person, label, named, cosine))
    return found


def hand_rates(units: Sequence[HandUnit], threshold: float) -> Rates:
    """(the named person's units that keep the name, their units, others' units that keep
    the label, others' units) when a unit needs ``threshold`` (below -1: every unit named)."""
    right = mine = kept = others = 0
    for unit in units:
        passes = unit.own is None or unit.own >= threshold
        if unit.person == unit.named:
            right, mine = right + passes, mine + 1
        elif unit.person is not None:
            kept, others = kept + (not passes), others + 1
    return right, mine, kept, others


def shown_by_hand(rates: Rates) -> str:
    right, mine, kept, others = rates
    return (
        f"right {right}, wrong {others - kept}, unnamed {mine - right + kept} "
        f"(the named person's kept {right}/{mine}, others' off {kept}/{others})"
    )


def report_by_hand(found: dict[str, list[HandUnit]], which: str = "every label") -> None:
    for recording, units in found.items():
        print(f"  {recording}, {which} named by hand:")
        for threshold in HAND_THRESHOLDS:
            print(f"    at {threshold}: {shown_by_hand(hand_rates(units, threshold))}")
        print(f"    every unit of the label named: {shown_by_hand(hand_rates(units, -2.0))}")


def fit_by_hand(units: Sequence[HandUnit]) -> object:
    """The threshold keeping the most others' units off while 0.95 of the named person's
    keep the name (:func:`best_of` with the two roles swapped)."""
    swapped = []
    for threshold in HAND_THRESHOLDS:
        right, mine, kept, others = hand_rates(units, threshold)
        swapped.append((kept, others, right, mine))
    return best_of(list(HAND_THRESHOLDS), swapped)


def opened(folder: Path) -> VideoIndex:
    reader = VideoReader(
        media_dir=folder / "media", diarizer=CampplusDiarizer(), frames=None, ocr="off"
    )
    return VideoIndex(folder, reader=reader)


def report(found: dict[str, list[Unit]], readers: Sequence[str]) -> None:
    for recording, units in found.items():
        print(f"  {recording}:")
        for threshold in THRESHOLDS:
            print(f"    at {threshold}: {shown(rates(units, threshold, readers))}")
        print(f"    every unit of a matched label named: {shown(rates(units, -2.0, readers))}")
        now = rates(units, VOICE_UNIT_THRESHOLD, readers)
        print(f"    a unit named at {VOICE_UNIT_THRESHOLD} of its own voice: {shown(now)}")


def fit(folder: Path | None) -> None:
    """Fit both thresholds; ``folder`` keeps the recordings and their index (an ingest
    again skips them), else a temporary one."""
    readers = [stem for stem, *_ in ENROL]
    with tempfile.TemporaryDirectory() as tmp:
        folder = folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        turns = build_fit(folder)
        index = opened(folder / "index")
        try:
            index.ingest([folder / name for name in turns])
            hand = {name: by_hand(index, folder, name, turns[name]) for name in turns}
            name_readers(index, "enrol.flac", turns["enrol.flac"], readers)
            found = {
                name: looked_up(index, folder, name, turns[name])
                for name in ("fit.flac", "fit_phone.mp3")
            }
        finally:
            index.close()
    report(found, readers)
    both = [u for units in found.values() for u in units]
    chosen = best_of(list(THRESHOLDS), [rates(both, t, readers) for t in THRESHOLDS])
    print(f"fitted on both recordings: {chosen}")
    report_by_hand(hand)
    every = [u for units in hand.values() for u in units]
    print(f"by hand, fitted on the three recordings: {fit_by_hand(every)}")


def trial(index_folder: Path, reference: Path, enrol: str, *recordings: str) -> None:
    turns = read_turns(reference)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "index"
        shutil.copytree(index_folder, copy)
        index = VideoIndex(copy)
        try:
            name_readers(index, enrol, turns, READERS_OF_TRIAL)
            paths = [Path(index.recording(p.source).path) for p in index.manifest.all_paths()]
            found = {
                path.name: looked_up(index, path.parent, path.name, turns)
                for path in paths
                if path.name != enrol and (not recordings or path.name in recordings)
            }
        finally:
            index.close()
    report(found, READERS_OF_TRIAL)


def hand_trial(index_folder: Path, reference: Path, *recordings: str) -> None:
    """Every label of the trial's recordings named by hand (none written), and the
    readers' labels alone (what the trial named)."""
    turns = read_turns(reference)
    index = VideoIndex(index_folder)
    try:
        paths = [Path(index.recording(p.source).path) for p in index.manifest.all_paths()]
        found = {
            path.name: by_hand(index, path.parent, path.name, turns)
            for path in paths
            if not recordings or path.name in recordings
        }
    finally:
        index.close()
    report_by_hand(found)
    readers = {
        name: [u for u in units if u.named in READERS_OF_TRIAL] for name, units in found.items()
    }
    report_by_hand(readers, "the readers' labels")


def read_turns(reference: Path) -> list[Turn]:
    return [
        (t["speaker"], t["start"], t["end"]) for t in json.loads(reference.read_text())["turns"]
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["fit", "trial", "hand"])
    parser.add_argument(
        "arguments",
        nargs="*",
        help="fit: [FOLDER]; trial: INDEX REFERENCE ENROL [RECORDING...]; "
        "hand: INDEX REFERENCE [RECORDING...]",
    )
    args = parser.parse_args(argv)
    print(f"named voices on wideband and phone audio; load {load_average()}")
    if args.action == "fit":
        fit(Path(args.arguments[0]) if args.arguments else None)
    elif args.action == "hand":
        index_folder, reference, *recordings = args.arguments
        hand_trial(Path(index_folder), Path(reference), *recordings)
    else:
        index_folder, reference, enrol, *recordings = args.arguments
        trial(Path(index_folder), Path(reference), enrol, *recordings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
