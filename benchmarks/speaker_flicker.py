"""Speaker labels that flicker on a word or two: units before and after the rule.

    python benchmarks/speaker_flicker.py --baseline-ref REF [AUDIO ...]

Each real recording of tests/fixtures/real_speech (AMI excerpts, a phone call, a
LibriVox reader) and tests/fixtures/real_readers/ten_readers.opus (ten LibriSpeech
readers in turns), and any ``AUDIO`` given (no reference turns: counts only), is heard
once by the default ASR (tiny.en with word times) and labelled once by CAM++ with the
count estimated; the units are then built from the same words and turns by this
checkout's ``reader/units.py`` and by ``REF``'s, so the two differ only in the rule.
Per file: units, units of one or two words, speaker changes between units where the
unit before does not end a sentence (a sentence cut by a change of label), and, where
reference turns exist, the share of each unit's speech from its main voice (purity),
units at least 90 % one voice, and units whose label maps to their main voice.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average, release  # noqa: E402
from benchmarks.diarization import real_files  # noqa: E402
from benchmarks.speaker_scoring import Turn, speaker_mapping, unit_purity  # noqa: E402

READERS = ROOT / "tests" / "fixtures" / "real_readers" / "ten_readers.opus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", required=True, help="units.py of this git ref")
    parser.add_argument("audio", nargs="*", type=Path, help="more recordings, counts only")
    args = parser.parse_args()

    from llama_index_video.reader import units as today

    baseline = _units_module(release(args.baseline_ref).source)
    recordings: list[tuple[str, Path, list[Turn] | None]] = [
        (item.name, item.audio, item.reference) for item in real_files()
    ]
    about = json.loads(READERS.with_suffix(".json").read_text(encoding="utf-8"))
    readers = [(t["start"], t["end"], t["speaker"]) for t in about["turns"]]
    recordings.append(("ten_readers", READERS, readers))
    recordings.extend((path.name, path, None) for path in args.audio)
    print(f"load {load_average()}; baseline {args.baseline_ref}")
    print(
        f"{'file':18} {'code':8} {'units':>5} {'1-2w':>4} {'cut':>4}"
        f" {'purity':>7} {'pure':>5} {'label':>5}"
    )
    for name, audio, reference in recordings:
        segments, turns = _heard(audio)
        for code, module in (("baseline", baseline), ("today", today)):
            print(f"{name:18} {code:8} {_scored(module, segments, turns, reference)}")
    print(f"load {load_average()}")


def _units_module(source: Path) -> ModuleType:
    """``reader/units.py`` of an exported version, imported beside today's package."""
    path = source / "llama_index_video" / "reader" / "units.py"
    spec = importlib.util.spec_from_file_location("baseline_units", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _heard(audio: Path) -> tuple[list, list]:
    """The ASR's segments and CAM++'s turns of ``audio``."""
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    transcription = FasterWhisperTranscriber().transcribe(decode_audio(audio), source=audio)
    turns = CampplusDiarizer().diarize(iter_audio_chunks(audio), source=audio)
    return list(transcription.segments), turns


def _scored(module: ModuleType, segments: list, turns: list, reference: list[Turn] | None) -> str:
    from llama_index_video.speakers.base import SpeakerTimeline

    units = list(module.build_units(segments, speaker_at=SpeakerTimeline(turns).speaker_at))
    short = sum(len(u.text.split()) <= 2 for u in units)
    cut = sum(
        a.speaker != b.speaker and not module.SENTENCE_END.search(a.text)
        for a, b in itertools.pairwise(units)
    )
    line = f"{len(units):5} {short:4} {cut:4}"
    if reference is None:
        return line
    words = [(w.start, w.end) for segment in segments for w in segment.words]
    found = [(t.start, t.end, t.speaker) for t in turns]
    spans = [(u.start, u.end, u.speaker) for u in units]
    score = unit_purity(reference, spans, words, speaker_mapping(reference, found))
    return f"{line} {score.purity:7.2%} {score.pure_units:5.0%} {score.labelled_right:5.0%}"


if __name__ == "__main__":
    main()
