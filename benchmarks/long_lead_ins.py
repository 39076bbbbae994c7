"""What a chunk's lead-in buys on the hour of real speech (issue 36).

    python benchmarks/long_lead_ins.py [--seconds 0 30 60 120] [--keep DIR]

``ingest`` transcribes a long recording in 10-minute chunks, each heard on its own (also
on Ray workers); with ``ReaderOptions(audio_lead_in_seconds=...)`` each chunk after the
first carries the last seconds of the one before (its lead-in,
:attr:`llama_index_video.media.audio.AudioChunk.lead_in`), which
faster-whisper decodes only for the prompt of the chunk's first window
(:func:`llama_index_video.transcription.faster_decoding.lead_in_prompt`). This script
hears the hour of :mod:`benchmarks.long_transcripts` (``--hour``: **real speech**, three
readings) in the same chunks with lead-ins of each of ``--seconds`` (0: none, each
chunk's prompt starts empty), in this process, with ``FasterWhisperTranscriber(
language="en")`` (tiny.en; the language check left out, as it is the same for all), and
scores the segments (not stored units) as :mod:`benchmarks.long_transcripts` does: the
word error rate, whole and per reading (choose a length on one reading, confirm on the
others), and the facts faster-whisper's defaults hear that these segments lack, the
defaults' transcript read from a ``long_transcripts.py --hour --keep DIR`` run (none
there: no lacks column). CPU seconds are this process's while it transcribes, with the
load beside them: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.long_speech import DEFAULT_CACHE  # noqa: E402
from benchmarks.long_transcripts import (  # noqa: E402
    Heard,
    Material,
    part_error_rate,
    real_material,
    spoken_words,
    synthetic_material,
)
from benchmarks.scoring import error_rate  # noqa: E402

if TYPE_CHECKING:
    from llama_index_video.transcription.base import Transcriber

CHUNK_SECONDS = 600.0
"""Ingest's chunks (``ReaderOptions.audio_chunk_seconds``)."""


def heard_in_chunks(
    material: Material,
    lead_in: float,
    *,
    transcriber: Transcriber | None = None,
    chunk_seconds: float = CHUNK_SECONDS,
) -> list[Heard]:
    """What ``transcriber`` (default: the default decoding) hears in ``material``, chunk
    by chunk (``chunk_seconds`` long), each with a lead-in of ``lead_in`` seconds, as
    ``transcribe_chunk`` hears it."""
    from llama_index_video.media.audio import iter_audio_chunks
    from llama_index_video.transcription.base import audio_from
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    transcriber = transcriber or FasterWhisperTranscriber(language="en")
    heard: list[Heard] = []
    chunks = iter_audio_chunks(material.audio, chunk_seconds=chunk_seconds, lead_in_seconds=lead_in)
    for chunk in chunks:
        with audio_from(chunk.start, before=chunk.lead_in):
            segments = transcriber.transcribe(chunk.samples, source=material.audio).segments
            heard += [Heard(s.start + chunk.start, s.end + chunk.start, s.text) for s in segments]
    return heard


def lacking(material: Material, heard: Sequence[Heard], defaults: Sequence[Heard]) -> list[str]:
    """The facts ``defaults`` hears that ``heard`` does not, sorted."""
    return sorted(set(material.heard(defaults)) - set(material.heard(heard)))


def by_part(material: Material, facts: Sequence[str]) -> dict[str, int]:
    """How many of ``facts`` belong to each reading of ``material`` (a joined
    recording's fact ids begin with their reading's name)."""
    return {
        part.name: sum(fact.startswith(f"{part.name}/") for fact in facts)
        for part in material.parts
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", nargs="+", type=float, default=[0.0, 30.0, 60.0, 120.0])
    parser.add_argument("--minutes", nargs="*", type=float, default=[], help="synthetic too")
    parser.add_argument("--no-hour", action="store_true", help="leave the hour out")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--keep", type=Path, help="a long_transcripts.py --keep folder")
    args = parser.parse_args(argv)
    materials = [] if args.no_hour else [real_material("hour", args.cache.parent / "long_real")]
    materials += [synthetic_material(minutes, args.cache) for minutes in args.minutes]
    for material in materials:
        kept = args.keep / f"{material.audio.stem}-defaults.json" if args.keep else None
        defaults = (
            [Heard(**h) for h in json.loads(kept.read_text())["heard"]]
            if kept is not None and kept.is_file()
            else None
        )
        names = [part.name for part in material.parts]
        print(f"\n## {material.name}, in {CHUNK_SECONDS:.0f} s chunks: WER (facts lacking)\n")
        print(f"| lead-in | whole | {' | '.join([*names, ''])}CPU s | load |")
        print(f"|---|---|{'---|' * len(names)}---|---|")
        for seconds in args.seconds:
            started = time.process_time()
            heard = heard_in_chunks(material, seconds)
            cpu = time.process_time() - started
            said = spoken_words(material.said)
            wer = error_rate(said, spoken_words(" ".join(h.text for h in heard)))
            lacks = lacking(material, heard, defaults) if defaults is not None else None
            shares = by_part(material, lacks) if lacks is not None else None
            cells = [f"{wer:.2%}" + ("" if lacks is None else f" ({len(lacks)})")]
            if lacks and not material.parts:
                cells[0] += f" {', '.join(lacks[:6])}"
            for part in material.parts:
                share = "" if shares is None else f" ({shares[part.name]})"
                cells.append(f"{part_error_rate(part, heard):.2%}{share}")
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"| {seconds:.0f} s | {' | '.join(cells)} | {cpu:.0f} | {load} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
