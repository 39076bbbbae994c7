"""Search in the recording's language and across languages: English default vs multilingual.

    python benchmarks/multilingual.py [--asr [--whisper-model NAME]] [--real]
                                      [--models NAME ...] [--examples] [--sweep] [--keep DIR]

Synthetic material (label it so): ``benchmarks/multilingual.json`` holds four short
recordings, German, Spanish, French and English, each read sentence by sentence by an
espeak-ng voice. By default each recording's script, timed to its audio, is its subtitle
file, so the units are what the reader makes of a perfect transcript and speech
recognition does not confound the embedding measurement; ``--asr`` drops the subtitles and
lets the index transcribe, with its default speech model or ``--whisper-model`` (e.g.
``base``, multilingual, which detects the language).

``--real`` adds recordings we did not make (``multilingual.json``'s ``real``: human German
and Spanish from silero-vad's test data, the German half of faster-whisper's
English-then-German test recording, whose speaker is not stated, and the corpus readings
of ``tests/fixtures/real_languages`` in German, Spanish, Portuguese, Japanese, Mandarin
and Arabic): they have no script, so they are always transcribed, by the index's speech
model (``tiny.en``, which hands the speech it finds not English to ``base``) or
``--whisper-model``. Their rows are labelled ``de real``, ``es real`` and so on, and
summed as ``real``.

All the recordings go into one index per embedding model (the English default,
all-MiniLM-L6-v2, and ``--embed multilingual``), so every question competes with the
other languages' recordings. Each question is asked in the recording's language and in
English; a hit is the right recording with a span overlapping the sentence holding the
answer. Reported per model: R@1, R@3 and MRR per language, with the index's default
threshold ("auto") and with none.

``--examples`` also runs the English example set (``benchmarks/questions.json`` over
examples/media, as ``benchmarks/evaluate.py`` does) with both models, so the cost of the
multilingual model on English is known; ``--sweep`` adds the cosine-threshold sweep of
``evaluate.py`` for the multilingual model.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from llama_index_video.embeddings.spec import EmbeddingSpec
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.options import ReaderOptions

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scoring import Question, RankedHit, first_hit_rank, summarise  # noqa: E402

SET = Path(__file__).with_name("multilingual.json")
FIXTURES = ROOT / "tests" / "fixtures"
REAL = " real"
"""Suffix of the language of a recording we did not make, in the report's rows."""
MODELS = ("english", "e5", "use")
TOP_K = 5
LEAD_SECONDS = 0.5
Asked = Literal["native", "english"]


@dataclass(frozen=True)
class Item:
    """One question: the sentence holding its answer, asked in the recording's language
    and in English (None for an English recording)."""

    id: str
    sentence: int
    native: str
    english: str | None


@dataclass(frozen=True)
class Recording:
    file: str
    language: str
    voice: str
    sentences: tuple[str, ...]
    items: tuple[Item, ...]


def load_set(path: Path = SET) -> tuple[list[Recording], float]:
    """The recordings and the silence between sentences; checks what the scoring relies on.

    Raises:
        ValueError: a question points at no sentence, an id repeats, or a non-English
            question has no English version.
    """
    raw = json.loads(path.read_text())
    recordings = []
    seen: set[str] = set()
    for spec in raw["recordings"]:
        sentences = tuple(spec["sentences"])
        items = tuple(
            Item(q["id"], int(q["sentence"]), q["native"], q.get("english"))
            for q in spec["questions"]
        )
        for item in items:
            if item.id in seen:
                raise ValueError(f"question id {item.id!r} is used twice")
            seen.add(item.id)
            if not 0 <= item.sentence < len(sentences):
                raise ValueError(f"{item.id}: no sentence {item.sentence} in {spec['file']}")
            if spec["language"] != "en" and not item.english:
                raise ValueError(f"{item.id}: no English version of the question")
        recordings.append(
            Recording(spec["file"], spec["language"], spec["voice"], sentences, items)
        )
    return recordings, float(raw["gap_seconds"])


@dataclass(frozen=True)
class RealRecording:
    """A recording we did not make (``fixture``, a path under ``tests/fixtures/``), cut at
    ``cut`` seconds and written as ``file``; its questions' times are seconds after the cut."""

    fixture: str
    file: str
    language: str
    cut: float
    speaker: str
    asked: dict[Asked, tuple[Question, ...]]


def load_real(path: Path = SET) -> list[RealRecording]:
    """The recordings we did not make, their questions asked natively and in English.

    Raises:
        ValueError: a question's answer does not lie after the cut, or a question has no
            English version.
    """
    recordings = []
    for spec in json.loads(path.read_text())["real"]:
        group = spec["language"] + REAL
        asked: dict[Asked, list[Question]] = {"native": [], "english": []}
        for q in spec["questions"]:
            if not 0.0 <= float(q["start"]) < float(q["end"]):
                raise ValueError(f"{q['id']}: the answer must lie after the cut, start < end")
            if not q.get("english"):
                raise ValueError(f"{q['id']}: no English version of the question")
            for way in asked:
                asked[way].append(
                    Question(q["id"], group, q[way], spec["file"], q["start"], q["end"])
                )
        recordings.append(
            RealRecording(
                spec["fixture"],
                spec["file"],
                spec["language"],
                float(spec["from"]),
                spec["speaker"],
                {way: tuple(chosen) for way, chosen in asked.items()},
            )
        )
    return recordings


def write_real(recording: RealRecording, folder: Path) -> None:
    """The fixture from its cut on, as 16 kHz mono WAV in ``folder``."""
    from faster_whisper.audio import decode_audio

    audio = decode_audio(str(FIXTURES / recording.fixture), sampling_rate=16_000)
    samples = audio[round(recording.cut * 16_000) :]
    write_wav(
        folder / recording.file, (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16), 16_000
    )


def write_wav(path: Path, samples: np.ndarray, rate: int) -> None:
    """16-bit ``samples`` as a WAV file: mono, or one channel per column of a 2-D array."""
    pcm = samples.astype(np.int16)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1 if pcm.ndim == 1 else pcm.shape[1])
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())


def cue_times(
    durations: Sequence[float], gap: float, lead: float = LEAD_SECONDS
) -> list[tuple[float, float]]:
    """Start and end of each sentence when they are read one after another, ``gap`` apart."""
    cues = []
    start = lead
    for duration in durations:
        cues.append((round(start, 3), round(start + duration, 3)))
        start += duration + gap
    return cues


def srt(cues: Sequence[tuple[float, float]], texts: Sequence[str]) -> str:
    """An SRT file with one cue per sentence."""

    def stamp(seconds: float) -> str:
        millis = round(seconds * 1000)
        hours, rest = divmod(millis, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d},{rest % 1000:03d}"

    blocks = [
        f"{number}\n{stamp(start)} --> {stamp(end)}\n{text}\n"
        for number, ((start, end), text) in enumerate(zip(cues, texts, strict=True), 1)
    ]
    return "\n".join(blocks)


def questions(
    recording: Recording, cues: Sequence[tuple[float, float]], asked: Asked
) -> list[Question]:
    """The scoring's questions for one recording, asked natively or in English."""
    chosen = []
    for item in recording.items:
        text = item.native if asked == "native" else item.english
        if text is None:
            continue
        start, end = cues[item.sentence]
        chosen.append(Question(item.id, recording.language, text, recording.file, start, end))
    return chosen


def synthesise(
    recording: Recording, folder: Path, gap: float, *, subtitles: bool
) -> list[tuple[float, float]]:
    """Read the recording's sentences with its espeak-ng voice into ``folder``; the cues."""
    pieces = []
    rate = 0
    for number, sentence in enumerate(recording.sentences):
        path = folder / f".{recording.file}.{number}.wav"
        subprocess.run(
            ["espeak-ng", "-v", recording.voice, "-s", "150", "-w", str(path), sentence],
            check=True,
            capture_output=True,
        )
        with wave.open(str(path)) as clip:
            rate = clip.getframerate()
            pieces.append(np.frombuffer(clip.readframes(clip.getnframes()), dtype=np.int16))
        path.unlink()
    cues = cue_times([len(p) / rate for p in pieces], gap)
    audio = np.zeros(int((cues[-1][1] + LEAD_SECONDS) * rate) + 1, dtype=np.int16)
    for (start, _), piece in zip(cues, pieces, strict=True):
        at = round(start * rate)
        audio[at : at + len(piece)] = piece[: len(audio) - at]
    write_wav(folder / recording.file, audio, rate)
    if subtitles:  # <stem>.<language>.srt: the reader takes the language from the name
        sidecar = folder / f"{Path(recording.file).stem}.{recording.language}.srt"
        sidecar.write_text(srt(cues, recording.sentences))
    return cues


def ranked(index: VideoIndex, question: Question) -> list[RankedHit]:
    from benchmarks.evaluate import ranked as as_ranked

    return as_ranked(index.search(question.question, top_k=TOP_K))


def measure(
    spec: EmbeddingSpec,
    media: Path,
    folder: Path,
    asked_sets: dict[tuple[str, Asked], list[Question]],
    reader_options: ReaderOptions | None = None,
) -> tuple[dict[str, dict[tuple[str, Asked], list[tuple[Question, list[RankedHit]]]]], float, int]:
    """Ingest ``media`` with ``spec``; each question set's results with and without threshold."""
    from llama_index_video.index import VideoIndex

    index = VideoIndex(folder, embed_model=spec, reader_options=reader_options)
    started = time.perf_counter()
    report = index.ingest(sorted(media.glob("*.wav")))
    seconds = time.perf_counter() - started
    if not report.ok:
        raise SystemExit(f"ingest failed: {report.of('failed')}")
    units = index.vector_store.client.count()  # ChromaVectorStore.client: its collection
    results = {}
    for name, threshold in (("auto", "auto"), ("none", None)):
        view = VideoIndex(
            folder, embed_model=index.embed_model, threshold=threshold, relevance=None
        )
        results[name] = {key: [(q, ranked(view, q)) for q in qs] for key, qs in asked_sets.items()}
        view.close()
    index.close()
    return results, seconds, units


def table(
    name: str, results: dict[tuple[str, Asked], list[tuple[Question, list[RankedHit]]]]
) -> list[str]:
    """Rows ``model threshold language asked n R@1 R@3 MRR``: one per language, then
    ``de+es+fr`` (the synthetic recordings but the English one) and ``real`` (the
    recordings we did not make) per way of asking."""
    rows = []
    sums = {
        "de+es+fr": lambda kind: not kind.endswith(REAL) and kind != "en",
        "real": lambda kind: kind.endswith(REAL),
    }
    for asked in ("native", "english"):
        keys = [key for key in results if key[1] == asked]
        for language in [*(key[0] for key in keys), *sums]:
            chosen = [
                r
                for key in keys
                if (sums[language](key[0]) if language in sums else key[0] == language)
                for r in results[key]
            ]
            if not chosen:
                continue
            summary = summarise(chosen)
            rows.append(
                f"| {name} | {language} | {asked} | "
                f"{summary.count} | {summary.recall[1]:.2f} | {summary.recall[3]:.2f} | "
                f"{summary.mrr:.2f} |"
            )
    return rows


def misses(results: dict[tuple[str, Asked], list[tuple[Question, list[RankedHit]]]]) -> list[str]:
    """Questions whose first hit is not at rank 1, with the rank (None: not in the top 5)."""
    return [
        f"{q.id} ({asked}): rank {first_hit_rank(q, hits)}"
        for (_, asked), pairs in results.items()
        for q, hits in pairs
        if first_hit_rank(q, hits) != 1
    ]


def examples(specs: dict[str, EmbeddingSpec], work: Path, sweeps: bool) -> None:
    """The English example set (benchmarks/questions.json) with each model."""
    from benchmarks.evaluate import EXAMPLES, load_questions, report, search_ours, sweep
    from llama_index_video.index import VideoIndex

    english = load_questions(Path(__file__).with_name("questions.json"))
    for name, spec in specs.items():
        index = VideoIndex(work / f"examples-{name}", embed_model=spec)
        started = time.perf_counter()
        if not index.ingest([EXAMPLES]).ok:
            raise SystemExit("ingest of examples/media failed")
        print(f"\nexamples ingest with {name}: {time.perf_counter() - started:.1f} s")
        report(
            f"English example set, {name} (threshold {index.threshold})",
            [(q, search_ours(index, q)) for q in english],
        )
        bare = VideoIndex(index.path, embed_model=index.embed_model, threshold=None, relevance=None)
        report(
            f"English example set, {name}, no threshold",
            [(q, search_ours(bare, q)) for q in english],
        )
        bare.close()
        if sweeps and name != "english":
            sweep(index, english)
        index.close()


def speed(specs: dict[str, EmbeddingSpec], texts: Sequence[str]) -> None:
    """Load time and warm embedding time of each model on ``texts`` (one process, in order)."""
    print("\n## embedding cost (this process; the first model also pays shared imports)")
    for name, spec in specs.items():
        started = time.perf_counter()
        model = spec.build()
        model.get_text_embedding_batch(list(texts[:1]))
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        model.get_text_embedding_batch(list(texts))
        batch = time.perf_counter() - started
        started = time.perf_counter()
        for text in texts[:20]:
            model.get_query_embedding(text)
        single = (time.perf_counter() - started) / min(20, len(texts))
        print(
            f"{name}: load + first text {loaded:.2f} s; {len(texts)} texts in one batch "
            f"{batch * 1000:.0f} ms; one query {single * 1000:.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--asr", action="store_true", help="transcribe instead of using the scripts"
    )
    parser.add_argument("--whisper-model", help="speech model for --asr (default: the index's)")
    parser.add_argument(
        "--real", action="store_true", help="also the recordings we did not make (transcribed)"
    )
    parser.add_argument(
        "--models", nargs="+", choices=MODELS, default=list(MODELS), help="embeddings to compare"
    )
    parser.add_argument("--examples", action="store_true", help="also the English example set")
    parser.add_argument(
        "--sweep", action="store_true", help="threshold sweeps of the multilingual models"
    )
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    args = parser.parse_args()
    args.asr = args.asr or bool(args.whisper_model)

    from llama_index_video.embeddings.spec import EmbeddingSpec
    from llama_index_video.weights import E5_MULTILINGUAL, USE_MULTILINGUAL

    every = {
        "english": EmbeddingSpec(),
        "e5": EmbeddingSpec(model=E5_MULTILINGUAL),
        "use": EmbeddingSpec(model=USE_MULTILINGUAL),
    }
    specs = {name: every[name] for name in args.models}
    reader_options = None
    if args.whisper_model:
        from llama_index_video.reader.options import ReaderOptions
        from llama_index_video.transcription.faster import FasterWhisperTranscriber

        transcriber = FasterWhisperTranscriber(model=args.whisper_model, language=None)
        reader_options = ReaderOptions(transcriber=transcriber, frames=None)
    work = args.keep or Path(tempfile.mkdtemp(prefix="multilingual-"))
    media = work / "media"
    if media.exists():
        shutil.rmtree(media)
    media.mkdir(parents=True)
    recordings, gap = load_set()
    asked_sets: dict[tuple[str, Asked], list[Question]] = {}
    for recording in recordings:
        cues = synthesise(recording, media, gap, subtitles=not args.asr)
        for asked in ("native", "english"):
            chosen = questions(recording, cues, asked)
            if chosen:
                asked_sets[(recording.language, asked)] = chosen
    source = f"ASR ({args.whisper_model or 'the default model'})" if args.asr else "the scripts"
    print(f"material: synthetic (espeak-ng), transcripts from {source}")
    for real in load_real() if args.real else []:
        write_real(real, media)
        for asked, chosen in real.asked.items():
            asked_sets.setdefault((real.language + REAL, asked), []).extend(chosen)
        print(
            f"material: {real.file}, {real.fixture} from {real.cut:g} s, not made here "
            f"(speaker: {real.speaker}), transcribed by ASR "
            f"({args.whisper_model or 'the default model'})"
        )
    for name, spec in specs.items():
        folder = work / f"index-{name}"
        shutil.rmtree(folder, ignore_errors=True)
        results, seconds, units = measure(spec, media, folder, asked_sets, reader_options)
        print(f"\n## {name}: ingest {seconds:.1f} s, {units} units")
        print("| model, threshold | language | asked in | n | R@1 | R@3 | MRR |")
        print("|---|---|---|---|---|---|---|")
        for threshold, by_set in results.items():
            print("\n".join(table(f"{name}, {threshold}", by_set)))
        print("not at rank 1 (threshold none):", "; ".join(misses(results["none"])) or "none")
    sentences = [s for r in recordings for s in r.sentences]
    speed(specs, sentences)
    if args.examples:
        examples(specs, work, args.sweep)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
