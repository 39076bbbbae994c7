"""Named voices end to end, per unit: a voice named in one meeting, named in another?

**Material: real speech only**, the five pairs of AMI excerpts of
tests/fixtures/real_speech that share people, each pair from two different meetings
(the AMI meetings, the halves and how they were found: ``benchmarks/voice_matching.py``).
Each excerpt's reference turns (``.rttm``) become an ``.srt`` sidecar, one cue per
turn, so units have known times without speech recognition; CAM++ (``num_speakers``:
the reference's count) labels the voices for real, in a real ingest.

For each pair and direction, every person of the first excerpt is named on the label
that said most of their units (unless named already), and each label of the second is
given the name its voice matches, or none; its units are scored by their reference
person (the one talking at a unit's middle, alone):

- *named correctly*: units of people named in the first excerpt that carry their name;
- *unknown*: units of people absent from the first that carry no name.

**Held out.** Each way of hearing a label's voice (CAM++ windows of ``window`` seconds;
only its units of at least ``min_unit`` seconds, when it has any) has its threshold and
margin (:func:`~llama_index_video.speakers.voices.best_voice`) chosen on one half's
excerpts and scored on the other's (the halves of ``voice_matching.MEETINGS``, every
ordered pair of excerpts of a half: the pairs above, and excerpts of different people,
whose units must all stay unknown); only held-out figures are results. The decisions
are computed from the stored labels (:func:`voice_centroids`, :func:`best_voice`), and
the package's own path (``speakers name``, then ``speakers relabel``) is run with its
settings on the held-out half's pairs, as the check that both agree.

    python benchmarks/voice_library.py [--package]

``--package`` runs the package's own path alone (half 0's pairs), for comparing code
versions: run it with this file copied into each version's tree.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from itertools import permutations, product
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.speaker_scoring import read_rttm  # noqa: E402
from benchmarks.voice_matching import (  # noqa: E402
    MARGINS,
    MEETINGS,
    THRESHOLDS,
    Setting,
    best_of,
    shown,
    total,
)
from llama_index_video import schema  # noqa: E402
from llama_index_video.index import VideoIndex  # noqa: E402
from llama_index_video.reader.video_reader import VideoReader  # noqa: E402
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer  # noqa: E402
from llama_index_video.speakers.voices import (  # noqa: E402
    VOICE_MARGIN,
    VOICE_MIN_UNIT,
    VOICE_THRESHOLD,
    VOICE_WINDOW,
    best_voice,
    voice_centroids,
)

REAL = ROOT / "tests" / "fixtures" / "real_speech"
PAIRS = (
    ("ami_dev00", "ami_dev01"),
    ("ami_trn06", "ami_trn09"),
    ("ami_tst00", "ami_tst01"),
    ("ami_trn00", "ami_trn03"),
    ("ami_trn07", "ami_trn08"),
)
# each group ingested into one index: the pairs, and excerpts whose people are in no other
GROUPS = (*PAIRS, ("ami_es2004a",), ("ami_trn04",), ("ami_trn05",))
MIN_UNITS = (0.0, 2.0)
WINDOWS = (1.0, 2.0)

Unit = tuple[str | None, str | None, float, float]  # person, stored speaker, start, end
Rates = tuple[int, int, int, int]


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


def timed_units(index: VideoIndex, stem: str) -> list[Unit]:
    """(reference person, stored speaker, start, end) of each transcript unit of ``stem``."""
    rows = index.vector_store._collection.get(include=["metadatas"])  # type: ignore[attr-defined]
    return [
        (
            person_of(stem, m[schema.START_S], m[schema.END_S]),
            m.get(schema.SPEAKER),
            m[schema.START_S],
            m[schema.END_S],
        )
        for m in rows["metadatas"]
        if m[schema.MODALITY] == "transcript" and m[schema.SOURCE].endswith(f"{stem}.flac")
    ]


def units(index: VideoIndex, stem: str) -> list[tuple[str | None, str | None]]:
    """(reference person, stored speaker) of each transcript unit of ``stem``."""
    return [(person, speaker) for person, speaker, _, _ in timed_units(index, stem)]


def namings(found: Sequence[Unit]) -> dict[str, str]:
    """label -> person: each person named on the label that said most of their units (of
    two labels that said as many, the first in order), unless that label is named
    already (a label two people said most: the first)."""
    named: dict[str, str] = {}
    for person in sorted({p for p, *_ in found if p}):
        said = [s for p, s, *_ in found if p == person and s]
        label = max(sorted(set(said)), key=said.count) if said else None
        if label is not None and label not in named:
            named[label] = person
    return named


def scored(second: Sequence[Unit], names: Mapping[str, str | None], named: set[str]) -> Rates:
    """(named correctly, units of ``named`` people, unknown, units of others) when each
    label of ``second`` carries the name ``names`` gives it (None: no name)."""
    return tally([(p, names.get(s) if s else None) for p, s, *_ in second], named)


def tally(given: Sequence[tuple[str | None, str | None]], named: set[str]) -> Rates:
    """(named correctly, units of ``named`` people, unknown, units of others) of units
    given as (reference person, name carried); units of no one person are not counted."""
    mine = [(p, n) for p, n in given if p and p in named]
    others = [n for p, n in given if p and p not in named]
    right = sum(p == n for p, n in mine)
    return right, len(mine), sum(n is None for n in others), len(others)


def label_voices(
    audio: Path, found: Sequence[Unit], *, window: float, min_unit: float
) -> dict[str, np.ndarray]:
    """Each label's voice in ``audio`` from its units (see :func:`voice_centroids`)."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for _, label, start, end in found:
        if label:
            spans.setdefault(label, []).append((start, end))
    return voice_centroids(audio, spans, window=window, min_unit=min_unit)


def direction_rates(
    first: Sequence[Unit],
    second: Sequence[Unit],
    voices: tuple[Mapping[str, np.ndarray], Mapping[str, np.ndarray]],
    *,
    threshold: float,
    margin: float,
) -> Rates:
    """Rates of ``second`` when ``first``'s people are named (see the module docstring)."""
    named = namings(first)
    library = {person: voices[0][label] for label, person in named.items() if label in voices[0]}
    names = {
        label: best_voice(centroid, library, threshold=threshold, margin=margin)
        for label, centroid in voices[1].items()
    }
    return scored(second, names, set(named.values()))


def opened(path: Path, speakers: int) -> VideoIndex:
    reader = VideoReader(
        media_dir=path / "media",
        diarizer=CampplusDiarizer(num_speakers=speakers),
        frames=None,
        ocr="off",
    )
    return VideoIndex(path, reader=reader)


def ingested(
    tmp: Path, groups: Sequence[tuple[str, ...]] = GROUPS
) -> Iterator[tuple[Path, dict[str, list[Unit]]]]:
    """Each of ``groups`` ingested for real into an index of its own in a folder of
    ``tmp`` (CAM++, ``num_speakers``: the most people of one of its excerpts), then
    closed: the folder (the excerpts' audio, ``index/``) and each excerpt's units."""
    for group in groups:
        folder = tmp / group[0]
        folder.mkdir()
        count = max(len({t[2] for t in read_rttm(REAL / f"{s}.rttm")}) for s in group)
        index = opened(folder / "index", count)
        try:
            index.ingest([copy_with_subtitles(s, folder) for s in group])
            found = {stem: timed_units(index, stem) for stem in group}
        finally:
            index.close()
        yield folder, found


def package_direction(folder: Path, first: str, second: str) -> Rates:
    """The package's own path: ``speakers name`` on ``first``, ``relabel`` on ``second``."""
    index = VideoIndex(folder)
    try:
        labelled = timed_units(index, first)
        named = namings(labelled)
        for label, person in named.items():
            index.name_speaker(f"{first}.flac", label, person)
        index.relabel_speakers([f"{second}.flac"])
        index.reopen()
        after = timed_units(index, second)
        names = {s: s for _, s, *_ in after if s and not s.startswith("SPEAKER_")}
        return scored(after, names, set(named.values()))
    finally:
        index.close()


def package_only() -> int:
    """The package's own path on half 0's pairs, both ways."""
    package = []
    with tempfile.TemporaryDirectory() as tmp:
        pairs = [pair for pair in PAIRS if MEETINGS[pair[0]][1] == 0]
        for folder, units_of in ingested(Path(tmp), pairs):
            group = tuple(units_of)
            for first, second in (group, group[::-1]):
                copy = Path(tmp) / f"{first}_named"
                shutil.copytree(folder / "index", copy)
                package.append(package_direction(copy, first, second))
                print(f"  package, named in {first}, relabelled {second}: {shown(package[-1])}")
    print(f"the package's own path on half 0's pairs: {shown(total(package))}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    print(f"named voices end to end on real speech (AMI), CAM++; load {load_average()}")
    if "--package" in (sys.argv[1:] if argv is None else argv):
        return package_only()
    found: dict[str, list[Unit]] = {}
    voices: dict[tuple[str, float, float], dict[str, np.ndarray]] = {}
    package: list[Rates] = []
    with tempfile.TemporaryDirectory() as tmp:
        for folder, units_of in ingested(Path(tmp)):
            group = tuple(units_of)
            found |= units_of
            for stem, window, min_unit in product(group, WINDOWS, MIN_UNITS):
                voices[stem, window, min_unit] = label_voices(
                    folder / f"{stem}.flac", found[stem], window=window, min_unit=min_unit
                )
            if len(group) == 2 and MEETINGS[group[0]][1] == 0:
                for first, second in (group, group[::-1]):
                    copy = Path(tmp) / f"{first}_named"
                    shutil.copytree(folder / "index", copy)
                    package.append(package_direction(copy, first, second))
                    print(f"  package, named in {first}, relabelled {second}: {shown(package[-1])}")

    def rates(half: int, setting: Setting, *, pairs_only: bool = False) -> Rates:
        """The half's rates over every ordered pair of its excerpts (or its pairs only)."""
        window, min_unit, threshold, margin = setting
        stems = [s for s in found if MEETINGS[s][1] == half]
        return total(
            direction_rates(
                found[x],
                found[y],
                (voices[x, window, min_unit], voices[y, window, min_unit]),
                threshold=threshold,
                margin=margin,
            )
            for x, y in permutations(stems, 2)
            if not pairs_only or (x, y) in PAIRS or (y, x) in PAIRS
        )

    print("held out (each half scored with the threshold and margin fitted on the other):")
    for window, min_unit, (rule, margins) in product(
        WINDOWS, MIN_UNITS, (("threshold", (0.0,)), ("threshold and margin", MARGINS))
    ):
        settings = list(product((window,), (min_unit,), THRESHOLDS, margins))
        held = []
        for half in (0, 1):
            setting = best_of(settings, [rates(1 - half, s) for s in settings])
            held.append(rates(half, setting))
            print(f"  half {half}, (window, min unit, threshold, margin) = {setting}:")
            print(f"    {shown(held[-1])}")
        print(f"  {window} s windows, units >= {min_unit} s, {rule}, both: {shown(total(held))}")
    setting = (VOICE_WINDOW, VOICE_MIN_UNIT, VOICE_THRESHOLD, VOICE_MARGIN)
    print(f"the package's setting {setting} on half 0: {shown(rates(0, setting))}")
    computed = rates(0, setting, pairs_only=True)
    print(
        f"  on its pairs only, computed: {shown(computed)}; its own path: {shown(total(package))}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
