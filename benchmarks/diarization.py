"""Speaker labels: diarization error rate, speaker-attributed questions, cost per minute.

    python benchmarks/diarization.py

On tests/fixtures/speech/dialogue.ogg (three espeak-ng voices, nine known turns) it
prints the DER of ResemblyzerDiarizer (0.25 s collar) and how many of the
"what did speaker N say about X" questions (benchmarks/speaker_scoring.py) the top
hit of ``search(topic, speakers=["SPEAKER_N"])`` answers. Cost is seconds of work per
minute of media, for diarization and, as the baseline measured in the same run on
the same audio, for decoding it and for transcribing it with faster-whisper tiny.en.
The first diarization in a process also pays for importing librosa and loading the
encoder; that is reported apart.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.speaker_scoring import (  # noqa: E402
    DIALOGUE_QUESTIONS,
    attributed_correctly,
    diarization_error_rate,
)

SPEECH = ROOT / "tests" / "fixtures" / "speech"
FILES = ("dialogue.ogg", "narration_en.ogg")


def main() -> None:
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    started = time.perf_counter()
    diarizer = ResemblyzerDiarizer()
    diarizer.diarize(iter_audio_chunks(SPEECH / "german_de.ogg"))  # imports, JIT, weights
    first_use = time.perf_counter() - started
    print(f"first use (imports, JIT, encoder load, 7 s of audio): {first_use:.1f} s")
    transcriber = FasterWhisperTranscriber()
    transcriber.transcribe(decode_audio(SPEECH / "german_de.ogg"))  # load the model too

    print(
        f"{'file':18} {'minutes':>7} {'decode s/min':>12} {'ASR s/min':>10} {'speakers s/min':>14}"
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
            f"{name:18} {minutes:7.2f} {(t1 - t0) / minutes:12.2f} {(t2 - t1) / minutes:10.2f}"
            f" {(t3 - t2) / minutes:14.2f}"
        )

    truth = json.loads((SPEECH / "dialogue.json").read_text())["turns"]
    reference = [(t["start"], t["end"], t["speaker"]) for t in truth]
    found = [(t.start, t.end, t.speaker) for t in turns["dialogue.ogg"]]
    score = diarization_error_rate(reference, found)
    print(
        f"dialogue DER {score.error_rate:.1%} (missed {score.missed:.1%}, false alarm "
        f"{score.false_alarm:.1%}, confusion {score.confusion:.1%}) over {score.speech:.1f} s; "
        f"speakers found {len({t[2] for t in found})} of 3"
    )
    narration = {t.speaker for t in turns["narration_en.ogg"]}
    print(f"narration (one voice): {len(narration)} speaker(s) found")
    print(f"speaker-attributed questions: {_question_accuracy()}")


def _question_accuracy() -> str:
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for suffix in (".ogg", ".srt"):
            shutil.copy(SPEECH / f"dialogue{suffix}", folder / f"dialogue{suffix}")
        reader = VideoReader(
            media_dir=folder / "index" / "media",
            diarizer=ResemblyzerDiarizer(),
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
