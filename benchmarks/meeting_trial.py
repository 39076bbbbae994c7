"""The meeting of a new user's trial: real voices joined into 16 minutes, and its questions.

    python benchmarks/meeting_trial.py build DIR     # the recordings and reference.json
    python benchmarks/meeting_trial.py score INDEX   # the questions, through VideoIndex.search

Material, **real speech** from this repository, joined by the system ffmpeg at 16 kHz mono
with 1 s between pieces (15:59): the 13 AMI excerpts of ``tests/fixtures/real_speech``, the
first 3 minutes of ``benchmarks/long_real/amateur_reader``, the phone call
``phone_call_2f``, the first 4 minutes of ``lj_reader_next`` and ``ten_readers`` (licences
in each piece's JSON). ``build`` writes it as recorders do, ``standup_2026-12-07.webm``
(Opus 32 kbit/s, sound alone), ``standup_audio.mkv`` (the same in Matroska) and
``standup_screen.mkv`` (Opus 48 kbit/s beside a still H.264 frame), and
``reference.json``: each piece's span, the speakers' turns and the readings' sentences.

``score`` asks :data:`QUESTIONS` (words of the reference sentences) of an index holding
``standup_2026-12-07.webm``, ingested with ``--speakers`` and the two readers named
``Arjun Rao`` and ``Linda Jones`` (``speakers name``), and prints whether each first hit
starts within 3 s of its sentence and names the reader. There is no baseline: the
trial's figures are the product's current state (docs/evaluation.md, *A meeting, through
every door*).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402

if TYPE_CHECKING:
    from llama_index_video import VideoIndex

REAL = ROOT / "tests" / "fixtures" / "real_speech"
LONG = ROOT / "benchmarks" / "long_real"
GAP_SECONDS = 1.0
RECORDING = "standup_2026-12-07.webm"
TOLERANCE_SECONDS = 3.0
AMI = ("trn00", "trn03", "trn04", "trn05", "trn06", "trn07", "trn08", "trn09")
PIECES: tuple[tuple[Path, float], ...] = (
    (REAL / "ami_es2004a.flac", 60.0),
    *((REAL / f"ami_{name}.flac", 30.0) for name in (*AMI, "tst00", "tst01", "dev00", "dev01")),
    (LONG / "amateur_reader.opus", 180.0),
    (REAL / "phone_call_2f.flac", 30.0),
    (LONG / "lj_reader_next.opus", 240.0),
    (ROOT / "tests" / "fixtures" / "real_readers" / "ten_readers.opus", 72.5865),
)
"""Each piece and the seconds of it taken from its start."""

QUESTIONS: tuple[tuple[str, tuple[float, ...], str | None], ...] = (
    ("Italy is contentedly stagnant", (664.4,), "Linda Jones"),
    ("showy books produced in America", (667.3,), "Linda Jones"),
    (
        "legibility is the first thing to aim at in the forms of letters",
        (689.6, 685.4),
        "Linda Jones",
    ),
    ("each figure in the old print has its own individuality", (772.0,), "Linda Jones"),
    ("long primer should be the smallest size in a book", (845.0,), "Linda Jones"),
    ("spaces between words as near as possible equal", (869.9,), "Linda Jones"),
    ("Jenson's letters designed within a square", (809.7,), "Linda Jones"),
    ("the art of making books by means of movable types", (441.9,), "Arjun Rao"),
    ("printing in Venice declined after his death", (474.1,), "Arjun Rao"),
    ("Chiswick press revived Caslon's founts for Longman", (539.0,), "Arjun Rao"),
    ("ugly white lines or rivers in the page", (581.0,), "Arjun Rao"),
    ("Sheila in Texas originally from Chicago", (628.4,), None),
    ("they call me a Yankee down here", (638.1,), None),
    ("a little LCD display with menus like a mobile phone", (38.0, 50.0), None),
    ("who wants to take notes", (366.0,), None),
)
"""Each question, where its sentence starts on the joined timeline (any of them), and the
reader named for it (None: a voice left unnamed)."""


@dataclass(frozen=True)
class Score:
    """How many first hits start at their sentence, and of those asked about a named
    reader, how many name the reader."""

    first: int
    asked: int
    named: int
    asked_named: int


def starts_at(start: float, sentence_starts: Sequence[float]) -> bool:
    """Whether a hit starting at ``start`` starts at one of the sentences."""
    return any(abs(start - said) <= TOLERANCE_SECONDS for said in sentence_starts)


def score(first_hits: Sequence[tuple[float, str | None] | None]) -> Score:
    """:data:`QUESTIONS` scored by each one's first hit, ``(start, speaker)`` or None."""
    first = named = asked_named = 0
    for (_, sentence_starts, reader), hit in zip(QUESTIONS, first_hits, strict=True):
        first += hit is not None and starts_at(hit[0], sentence_starts)
        if reader is not None:
            asked_named += 1
            named += hit is not None and hit[1] == reader
    return Score(first, len(QUESTIONS), named, asked_named)


def join(folder: Path) -> Path:
    """Write the joined meeting as 16 kHz mono WAV and its reference into ``folder``;
    the WAV's path."""
    folder.mkdir(parents=True, exist_ok=True)
    inputs: list[str] = []
    filters = []
    pieces = []
    offset = 0.0
    for number, (path, seconds) in enumerate(PIECES):
        inputs += ["-t", str(seconds), "-i", str(path)]
        mono = "aresample=16000,aformat=channel_layouts=mono"
        filters.append(f"[{number}:a]{mono},apad=whole_dur={seconds + GAP_SECONDS}[a{number}]")
        pieces.append({"piece": path.stem, "start": offset, "end": offset + seconds})
        offset += seconds + GAP_SECONDS
    joined = "".join(f"[a{n}]" for n in range(len(PIECES)))
    graph = ";".join(filters) + f";{joined}concat=n={len(PIECES)}:v=0:a=1[out]"
    master = folder / "meeting.wav"
    ffmpeg(*inputs, "-filter_complex", graph, "-map", "[out]", str(master))
    (folder / "reference.json").write_text(json.dumps(_reference(pieces), indent=1) + "\n")
    return master


def build(folder: Path) -> None:
    """Write the joined meeting in three containers and its reference into ``folder``."""
    master = join(folder)
    ffmpeg("-i", str(master), "-c:a", "libopus", "-b:a", "32k", str(folder / RECORDING))
    audio_only = ("-i", str(master), "-c:a", "libopus", "-b:a", "32k")
    ffmpeg(*audio_only, "-f", "matroska", str(folder / "standup_audio.mkv"))
    still = ("-f", "lavfi", "-i", "color=c=navy:s=640x360:r=1", "-i", str(master), "-shortest")
    video = ("-c:v", "libx264", "-tune", "stillimage", "-pix_fmt", "yuv420p")
    ffmpeg(*still, *video, "-c:a", "libopus", "-b:a", "48k", str(folder / "standup_screen.mkv"))
    master.unlink()


def ask(index: VideoIndex, recording: str) -> Score:
    """:data:`QUESTIONS` asked of ``recording`` in ``index``, each first hit printed."""
    hits = []
    for question, sentence_starts, _ in QUESTIONS:
        found = index.search(question, top_k=1, sources=[recording])
        hit = (found[0].start, found[0].speaker) if found else None
        hits.append(hit)
        right = hit is not None and starts_at(hit[0], sentence_starts)
        print(f"{'right' if right else 'wrong'}  {question}: {hit}")
    return score(hits)


def print_score(index_folder: Path, recording: str) -> None:
    """:func:`ask` of ``recording`` in the index at ``index_folder``, its score printed."""
    from llama_index_video import VideoIndex

    index = VideoIndex(index_folder)
    try:
        result = ask(index, recording)
    finally:
        index.close()
    print(
        f"first hit at its sentence ({TOLERANCE_SECONDS:g} s): {result.first} of {result.asked}; "
        f"naming its reader: {result.named} of {result.asked_named} (load {load_average()})"
    )


def _reference(pieces: list[dict]) -> dict:
    """The pieces' spans, each speaker's turns and the readings' sentences, on the joined
    timeline."""
    turns, sentences = [], []
    for piece in pieces:
        path = next(p for p, _ in PIECES if p.stem == piece["piece"])
        end = piece["end"] - piece["start"]
        rttm = path.with_suffix(".rttm")
        for line in rttm.read_text().splitlines() if rttm.exists() else []:
            fields = line.split()
            start, length, who = float(fields[3]), float(fields[4]), fields[7]
            turns.append((f"{piece['piece']}:{who}", piece["start"] + start, length))
        described = json.loads(path.with_suffix(".json").read_text())
        for said in described.get("turns", []):  # the readings' and the call's sentences
            if "text" in said and said["end"] <= end:
                at = round(piece["start"] + said["start"], 3)
                sentences.append({"piece": piece["piece"], "start": at, "text": said["text"]})
    return {
        "pieces": pieces,
        "turns": [{"speaker": s, "start": round(a, 3), "seconds": n} for s, a, n in turns],
        "sentences": sentences,
    }


def ffmpeg(*args: str) -> None:
    """Run the system ffmpeg quietly, failing on its errors."""
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", *args]
    subprocess.run(command, check=True, timeout=600)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["build", "score"])
    parser.add_argument("folder", type=Path, help="build: where to write; score: the index")
    args = parser.parse_args(argv)
    if args.action == "build":
        build(args.folder)
        print(f"wrote {RECORDING}, standup_audio.mkv, standup_screen.mkv in {args.folder}")
        return 0
    print_score(args.folder, RECORDING)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
