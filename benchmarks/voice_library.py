"""Named voices end to end, per unit: a voice named in one recording, named in another?

**Material: real speech only**, the five pairs of AMI excerpts of
tests/fixtures/real_speech that share people (as ``benchmarks/voice_matching.py``; each
pair from one meeting session). Each excerpt's reference turns (``.rttm``) become an
``.srt`` sidecar, one cue per turn, so units have known times without speech
recognition; CAM++ (``--speakers 2``... the count of the reference) labels the voices.

For each pair, both excerpts are ingested into one index; then, for each direction, in a
copy of it: every person of the first excerpt is named (``speakers name``, on the label
that said most of their units, unless named already), ``speakers relabel`` runs on the
second, and its units are scored by their reference person (a unit's person: the one
talking at its middle, alone):

- *named correctly*: units of people named in the first excerpt that carry their name;
- *unknown*: units of people absent from the first that carry no name.

    python benchmarks/voice_library.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.speaker_scoring import read_rttm  # noqa: E402
from llama_index_video import schema  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402
from llama_index_video.reader.video_reader import VideoReader  # noqa: E402
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer  # noqa: E402

REAL = ROOT / "tests" / "fixtures" / "real_speech"
PAIRS = (
    ("ami_dev00", "ami_dev01"),
    ("ami_trn00", "ami_trn03"),
    ("ami_trn06", "ami_trn09"),
    ("ami_trn07", "ami_trn08"),
    ("ami_tst00", "ami_tst01"),
)


def srt_time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02}:{ms // 60_000 % 60:02}:{ms // 1000 % 60:02},{ms % 1000:03}"


def copy_with_subtitles(stem: str, folder: Path) -> Path:
    """The excerpt copied into ``folder`` with an ``.srt`` of its reference turns."""
    shutil.copy(REAL / f"{stem}.flac", folder / f"{stem}.flac")
    cues = [
        f"{i}\n{srt_time(start)} --> {srt_time(end)}\nturn {i} of the meeting\n"
        for i, (start, end, _) in enumerate(read_rttm(REAL / f"{stem}.rttm"), 1)
    ]
    (folder / f"{stem}.srt").write_text("\n".join(cues))
    return folder / f"{stem}.flac"


def person_of(stem: str, start: float, end: float) -> str | None:
    """The reference person talking alone at the middle of ``[start, end]``, if any."""
    middle = (start + end) / 2
    talking = {who for a, b, who in read_rttm(REAL / f"{stem}.rttm") if a <= middle < b}
    return talking.pop() if len(talking) == 1 else None


def units(index: VideoIndex, stem: str) -> list[tuple[str | None, str | None]]:
    """(reference person, stored speaker) of each transcript unit of ``stem``."""
    rows = index.vector_store._collection.get(include=["metadatas"])  # type: ignore[attr-defined]
    return [
        (person_of(stem, m[schema.START_S], m[schema.END_S]), m.get(schema.SPEAKER))
        for m in rows["metadatas"]
        if m[schema.MODALITY] == "transcript" and m[schema.SOURCE].endswith(f"{stem}.flac")
    ]


def opened(path: Path, speakers: int) -> VideoIndex:
    reader = VideoReader(
        media_dir=path / "media",
        diarizer=CampplusDiarizer(num_speakers=speakers),
        frames=None,
        ocr="off",
    )
    return VideoIndex(path, reader=reader)


def direction(folder: Path, first: str, second: str) -> tuple[int, int, int, int]:
    """(named correctly, units of named people, unknown, units of others) in ``second``."""
    index = VideoIndex(folder)
    try:
        labelled = units(index, first)
        named: dict[str, str] = {}  # label -> person (a label two people said most: the first)
        for person in sorted({p for p, _ in labelled if p}):
            said = [s for p, s in labelled if p == person and s and s.startswith("SPEAKER_")]
            label = max(set(said), key=said.count) if said else None
            if label is not None and label not in named:
                index.name_speaker(f"{first}.flac", label, person)
                named[label] = person
        index.relabel_speakers([f"{second}.flac"])
        index.reopen()
        scored = [(p, s) for p, s in units(index, second) if p]
        mine = [(p, s) for p, s in scored if p in named.values()]
        others = [(p, s) for p, s in scored if p not in named.values()]
        right = sum(p == s for p, s in mine)
        unknown = sum(not s or s.startswith("SPEAKER_") for _, s in others)
        return right, len(mine), unknown, len(others)
    finally:
        index.close()


def main() -> int:
    print(f"named voices end to end on real speech (AMI), CAM++; load {load_average()}")
    totals = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        for a, b in PAIRS:
            folder = Path(tmp) / a
            folder.mkdir()
            count = max(len({t[2] for t in read_rttm(REAL / f"{s}.rttm")}) for s in (a, b))
            index = opened(folder / "index", count)
            index.ingest([copy_with_subtitles(s, folder) for s in (a, b)])
            index.close()
            for first, second in ((a, b), (b, a)):
                copy = Path(tmp) / f"{first}_named"
                shutil.copytree(folder / "index", copy)
                found = direction(copy, first, second)
                totals = [t + f for t, f in zip(totals, found, strict=True)]
                print(
                    f"  named in {first}, looked up in {second}: named correctly "
                    f"{found[0]}/{found[1]} units, unknown {found[2]}/{found[3]}"
                )
    right, mine, unknown, others = totals
    print(
        f"all: named correctly {right}/{mine} = {right / max(mine, 1):.2f} of units "
        f"(target 0.9), unknown {unknown}/{others} = {unknown / max(others, 1):.2f} (target 0.95)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
