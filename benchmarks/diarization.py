"""Speaker labels: diarization error rate, speaker count, unit purity, WER, cost per minute.

    python benchmarks/diarization.py            # the real recordings, then the synthetic set
    python benchmarks/diarization.py --real     # the real recordings only
    python benchmarks/diarization.py --loo      # leave-one-out check of the thresholds

**Real recordings** (tests/fixtures/real_speech/: a phone call, AMI meeting excerpts, a
LibriVox reader; each file's source and licence in the .json beside it): per file and
per backend, the diarization error rate (0.25 s collar), the speakers found against
the speakers heard for at least 2 s, and, for the units the default ASR (tiny.en with
word times) and the speaker labels make together, their purity (share of each unit's
speech from its main speaker; units at least 90 % one voice) and how many carry the
label of their main speaker. The CAM++ backend runs with the count estimated and with
the count given; Resemblyzer, the previous default, runs in the same pass as the
baseline. Word error rate is printed where a human transcript exists.

**Synthetic voices** (espeak-ng, not real-world figures):

On tests/fixtures/speech/dialogue.ogg (three espeak-ng voices, nine known turns) it
prints each backend's DER (0.25 s collar) and how many of the "what did speaker N say
about X" questions (benchmarks/speaker_scoring.py) the top hit of
``search(topic, speakers=["SPEAKER_N"])`` answers with CAM++. Cost is seconds of work
per minute of media, for diarization and, as the baseline measured in the same run on
the same audio, for decoding it and for transcribing it with faster-whisper tiny.en.
The first diarization in a process also pays for imports and loading the encoder;
that is reported apart.

**Leave-one-out** (``--loo``): the clustering thresholds (average-linkage similarity,
centroid merge similarity, the fewest seconds a speaker needs) were chosen on the real
set itself. Each real file in turn is left out, the thresholds are chosen again from
a grid on the other files (most right counts, then lowest mean DER), and the left-out
file is scored with them: an estimate of how the count and DER hold on recordings
the thresholds were not tuned on.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.speaker_scoring import (  # noqa: E402
    DIALOGUE_QUESTIONS,
    Turn,
    attributed_correctly,
    diarization_error_rate,
    read_rttm,
    speaker_count,
    speaker_mapping,
    unit_purity,
)
from benchmarks.transcription_speed import word_error_rate  # noqa: E402

SPEECH = ROOT / "tests" / "fixtures" / "speech"
REAL = ROOT / "tests" / "fixtures" / "real_speech"
FILES = ("dialogue.ogg", "narration_en.ogg")


def main() -> None:
    if "--loo" in sys.argv:
        leave_one_out()
        return
    real_set()
    if "--real" not in sys.argv:
        synthetic_set()


@dataclass(frozen=True)
class RealFile:
    """One recording of the real-speech set: its audio, reference turns and words."""

    name: str
    audio: Path
    reference: list[Turn]
    text: str | None  # the human transcript, where there is one


def real_files() -> list[RealFile]:
    """The real-speech set, from the .json beside each recording."""
    files = []
    for described in sorted(REAL.glob("*.json")):
        about = json.loads(described.read_text(encoding="utf-8"))
        audio = (REAL / about.get("audio", described.with_suffix(".flac").name)).resolve()
        if "reference" in about:
            reference = read_rttm(REAL / about["reference"])
        else:
            reference = [(t["start"], t["end"], t["speaker"]) for t in about["turns"]]
        words = [t["text"] for t in about.get("turns", []) if t.get("text")]
        files.append(RealFile(described.stem, audio, reference, " ".join(words) or None))
    return files


def real_set() -> None:
    """Every backend on every real recording; see the module docstring."""
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks
    from llama_index_video.reader.units import build_units
    from llama_index_video.speakers.base import SpeakerTimeline
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    transcriber = FasterWhisperTranscriber()
    print("real recordings (DER with 0.25 s collar; units from tiny.en words)")
    print(
        f"{'file':18} {'backend':16} {'spk':>3} {'found':>5} {'DER':>6} {'miss':>5} {'FA':>5}"
        f" {'conf':>5} {'purity':>6} {'pure':>5} {'label':>5} {'s':>5}"
    )
    totals: dict[str, list[tuple[bool, float]]] = {}
    for item in real_files():
        heard = speaker_count(item.reference)
        transcription = transcriber.transcribe(decode_audio(item.audio), source=item.audio)
        segments = list(transcription.segments)
        words = [(word.start, word.end) for segment in segments for word in segment.words]
        backends = {
            "campplus": CampplusDiarizer(),
            f"campplus N={heard}": CampplusDiarizer(num_speakers=heard),
            "resemblyzer": ResemblyzerDiarizer(),
        }
        for label, diarizer in backends.items():
            started = time.perf_counter()
            turns = diarizer.diarize(iter_audio_chunks(item.audio), source=item.audio)
            seconds = time.perf_counter() - started
            found = [(t.start, t.end, t.speaker) for t in turns]
            score = diarization_error_rate(item.reference, found)
            timeline = SpeakerTimeline(turns)
            units = [
                (u.start, u.end, u.speaker)
                for u in build_units(segments, speaker_at=timeline.speaker_at)
            ]
            mapping = speaker_mapping(item.reference, found)
            purity = unit_purity(item.reference, units, words, mapping)
            count = len(timeline.speakers)
            totals.setdefault(label.split(" N=")[0] + (" N" if "N=" in label else ""), []).append(
                (count == heard, score.error_rate)
            )
            print(
                f"{item.name:18} {label:16} {heard:3} {count:5} {score.error_rate:6.1%}"
                f" {score.missed:5.1%} {score.false_alarm:5.1%} {score.confusion:5.1%}"
                f" {purity.purity:6.1%} {purity.pure_units:5.0%} {purity.labelled_right:5.0%}"
                f" {seconds:5.1f}"
            )
        if item.text:
            heard_text = " ".join(segment.text for segment in segments)
            error = word_error_rate(item.text, heard_text)
            print(f"{item.name:18} word error rate of tiny.en: {error:.1%}")
    for label, rows in totals.items():
        right = sum(ok for ok, _ in rows)
        mean = sum(der for _, der in rows) / len(rows)
        print(f"{label:16} right count on {right}/{len(rows)} files; mean DER {mean:.1%}")


# The grid the thresholds are chosen from: linkage similarity, merge similarity, and
# the fewest seconds of windows a speaker needs.
GRID = tuple(
    (linkage, merge, seconds)
    for linkage in (0.35, 0.4, 0.45, 0.5)
    for merge in (0.7, 0.75, 0.8, 0.85)
    for seconds in (1.0, 1.5, 2.0, 2.5, 3.0)
)


def leave_one_out() -> None:
    """The thresholds chosen without each file, scored on it; see the module docstring."""
    from llama_index_video.media.audio import iter_audio_chunks
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.clustering import (
        LINKAGE_SIMILARITY,
        MERGE_SIMILARITY,
        cluster_windows,
    )

    files = real_files()
    diarizer = CampplusDiarizer()
    # (count right, DER) per file and grid point, from one embedding per file.
    scores: dict[str, dict[tuple[float, float, float], tuple[bool, float]]] = {}
    for item in files:
        embedded = diarizer.embed(iter_audio_chunks(item.audio), source=item.audio)
        heard = speaker_count(item.reference)
        scores[item.name] = {}
        for point in GRID:
            linkage, merge, seconds = point
            labels = cluster_windows(
                embedded.embeddings,
                min_speakers=embedded.least_speakers,
                min_windows=max(2, round(seconds / diarizer.hop)),
                merge_similarity=merge,
                linkage_similarity=linkage,
            )
            turns = diarizer.turns(embedded, labels)
            found = [(t.start, t.end, t.speaker) for t in turns]
            right = len({t.speaker for t in turns}) == heard
            scores[item.name][point] = (
                right,
                diarization_error_rate(item.reference, found).error_rate,
            )
    default = (LINKAGE_SIMILARITY, MERGE_SIMILARITY, diarizer.min_speaker_seconds)
    print("leave-one-out: thresholds chosen on the other files, scored on the file left out")
    print(f"{'file':18} {'chosen (link, merge, s)':24} {'right':>5} {'DER':>6} {'in-sample':>9}")
    held_right, held_der = 0, 0.0
    for item in files:
        others = [name for name in scores if name != item.name]

        def cost(point: tuple[float, float, float], names: list[str] = others) -> tuple[int, float]:
            rows = [scores[name][point] for name in names]
            return -sum(ok for ok, _ in rows), sum(der for _, der in rows) / len(rows)

        chosen = min(GRID, key=cost)
        right, der = scores[item.name][chosen]
        held_right += right
        held_der += der
        print(
            f"{item.name:18} {chosen!s:24} {'yes' if right else 'no':>5} {der:6.1%}"
            f" {scores[item.name][default][1]:9.1%}"
        )
    in_right = sum(scores[name][default][0] for name in scores)
    in_der = sum(scores[name][default][1] for name in scores) / len(scores)
    print(
        f"in-sample (the defaults {default}, chosen on all files): right count on"
        f" {in_right}/{len(files)}, mean DER {in_der:.1%}"
    )
    print(
        f"leave-one-out: right count on {held_right}/{len(files)},"
        f" mean DER {held_der / len(files):.1%}"
    )


def synthetic_set() -> None:
    """Both backends on the espeak-ng dialogue and narration; cost per minute of media."""
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    print("synthetic voices (espeak-ng; timing and regression, not real-world quality)")
    transcriber = FasterWhisperTranscriber()
    transcriber.transcribe(decode_audio(SPEECH / "german_de.ogg"))  # load the model
    truth = json.loads((SPEECH / "dialogue.json").read_text())["turns"]
    reference = [(t["start"], t["end"], t["speaker"]) for t in truth]
    for diarizer in (CampplusDiarizer(), ResemblyzerDiarizer()):
        started = time.perf_counter()
        diarizer.diarize(iter_audio_chunks(SPEECH / "german_de.ogg"))  # imports, weights
        first_use = time.perf_counter() - started
        print(f"{diarizer.name}: first use (imports, model load, 7 s of audio) {first_use:.1f} s")
        print(
            f"{'file':18} {'minutes':>7} {'decode s/min':>12} {'ASR s/min':>10}"
            f" {'speakers s/min':>14}"
        )
        turns = {}
        for name in FILES:
            path = SPEECH / name
            t0 = time.perf_counter()
            audio = decode_audio(path)
            t1 = time.perf_counter()
            list(transcriber.transcribe(audio).segments)
            t2 = time.perf_counter()
            turns[name] = diarizer.diarize(iter_audio_chunks(path))
            t3 = time.perf_counter()
            minutes = len(audio) / 16000 / 60
            print(
                f"{name:18} {minutes:7.2f} {(t1 - t0) / minutes:12.2f}"
                f" {(t2 - t1) / minutes:10.2f} {(t3 - t2) / minutes:14.2f}"
            )
        found = [(t.start, t.end, t.speaker) for t in turns["dialogue.ogg"]]
        score = diarization_error_rate(reference, found)
        print(
            f"dialogue DER {score.error_rate:.1%} (missed {score.missed:.1%}, false alarm "
            f"{score.false_alarm:.1%}, confusion {score.confusion:.1%}) over "
            f"{score.speech:.1f} s; speakers found {len({t[2] for t in found})} of 3"
        )
        narration = {t.speaker for t in turns["narration_en.ogg"]}
        print(f"narration (one voice): {len(narration)} speaker(s) found")
    print(f"speaker-attributed questions (CAM++): {_question_accuracy()}")


def _question_accuracy() -> str:
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for suffix in (".ogg", ".srt"):
            shutil.copy(SPEECH / f"dialogue{suffix}", folder / f"dialogue{suffix}")
        reader = VideoReader(
            media_dir=folder / "index" / "media",
            diarizer=CampplusDiarizer(),
            frames=None,
            ocr="off",
        )
        index = VideoIndex(folder / "index", reader=reader)
        try:
            index.ingest([folder / "dialogue.ogg"])
            with_filter = without = 0
            for question in DIALOGUE_QUESTIONS:
                speaker = f"SPEAKER_{question.speaker}"
                hits = index.search(question.topic, top_k=3, speakers=[speaker])
                with_filter += attributed_correctly(question, [(h.start, h.end) for h in hits])
                hits = index.search(f"what did {speaker} say about {question.topic}", top_k=3)
                without += attributed_correctly(question, [(h.start, h.end) for h in hits])
        finally:
            index.close()
    total = len(DIALOGUE_QUESTIONS)
    return (
        f"{with_filter}/{total} with the speaker filter; "
        f"{without}/{total} asking by topic and speaker name alone (baseline)"
    )


if __name__ == "__main__":
    main()
