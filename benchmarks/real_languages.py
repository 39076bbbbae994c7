"""Real speech in other languages through the default speech recognition.

    python benchmarks/real_languages.py [--files a.json b.json ...]

Material: ``tests/fixtures/real_languages`` — short recordings of real people reading
Arabic, German, Spanish, French, Japanese, Portuguese and Mandarin (FLEURS, Common
Voice, Multilingual LibriSpeech, AISHELL-1, the Arabic Speech Corpus), each with its
source, licence and, where one exists, its human transcript in the ``.json`` beside it.
None of it was used to build or tune the language check.

Each file goes through ``FasterWhisperTranscriber()`` with its defaults, as an ingest
would: ``tiny.en`` with the language check, which hands speech that is not English to
the multilingual ``base``. Reported per file: the language expected and the stretches
found, the languages the segments were written in, whether any English text came out,
the error rate against the human transcript (words, accents and case aside; per
character for Chinese and Japanese, which have no spaces: the tokens of the lexical
index, :func:`llama_index_video.store.tokens.words`), and CPU seconds (the first file
also pays for loading both models).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ingest_speed import machine  # noqa: E402
from benchmarks.scoring import error_rate  # noqa: E402

REAL_LANGUAGES = ROOT / "tests" / "fixtures" / "real_languages"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--files", nargs="+", type=Path, default=sorted(REAL_LANGUAGES.glob("*.json"))
    )
    args = parser.parse_args(argv)

    from llama_index_video.media.audio import decode_audio
    from llama_index_video.store.tokens import words
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    transcriber = FasterWhisperTranscriber()
    print(f"machine: {machine()}")
    print(
        f"{'file':18} {'spoken':>6} {'found':28} {'written in':10} {'English?':8}"
        f" {'error':>6} {'CPU s':>6}"
    )
    wrong_language = english = 0
    for described in args.files:
        about = json.loads(described.read_text(encoding="utf-8"))
        audio = described.with_name(about["audio"])
        started = time.process_time()
        transcription = transcriber.transcribe(decode_audio(audio), source=audio)
        segments = list(transcription.segments)
        seconds = time.process_time() - started
        written = sorted({segment.language for segment in segments})
        found = transcription.info.options["languages"] or transcription.info.language
        english += "en" in written
        wrong_language += written != [about["language"]]
        text = " ".join(segment.text for segment in segments)
        error = (
            f"{error_rate(words(about['transcript']), words(text)):6.1%}"
            if about.get("transcript")
            else f"{'-':>6}"
        )
        print(
            f"{described.stem:18} {about['language']:>6} {found!s:28}"
            f" {' '.join(written):10} {'yes' if 'en' in written else 'no':8} {error}"
            f" {seconds:6.1f}"
        )
        print(f"{'':18} heard: {text.strip()[:150]}")
    print(
        f"{len(args.files)} files: {english} with English text, "
        f"{wrong_language} written in another language than spoken"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
