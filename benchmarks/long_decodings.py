"""Ingest's decoding of a long recording beside faster-whisper's defaults, chunk by chunk
(issue 36).

    python benchmarks/long_decodings.py [--recipes ours seek defaults-chunked defaults]
        [--no-hour] [--minutes 20] [--chunk-seconds 600] --keep DIR

``ingest`` hears a long recording in 10-minute chunks, each on its own (also on Ray
workers); faster-whisper's defaults, the bar of issue 36, hear the whole file in one
call. This script hears the hour of :mod:`benchmarks.long_transcripts` (**real
speech**, three readings joined) and ``--minutes`` of :mod:`benchmarks.long_speech`
(**synthetic speech**) in this process, with tiny.en int8, by each of ``--recipes``:

- ``ours``: the default decoding (``FasterWhisperTranscriber(language="en")``; the
  language check left out, as it is the same for all), chunk by chunk as ingest hears
  them (:func:`benchmarks.long_lead_ins.heard_in_chunks`): the chunk's speech (VAD) in
  clips that end in pauses, each window prompted with the text before it;
- ``ours-words``: ``ours`` without word timestamps (faster-whisper then starts a window
  where the text's last timestamp put it, not after the last word heard);
- ``seek``: the same, but each chunk's speech decoded as faster-whisper decodes a file,
  30 s windows from wherever the text before ended, not clips cut at pauses
  (:func:`seek_windows`); the package's repairs (:mod:`...transcription.loops`,
  :mod:`...transcription.skips`) as in ``ours``;
- ``ours+fallback``, ``seek+fallback``: those with faster-whisper's temperature fallback
  (``temperature=FALLBACK``: it samples at random where a window's text compresses too
  well or is too improbable; none of this package's defaults);
- ``defaults-chunked``: faster-whisper's defaults (``WhisperModel.transcribe`` with no
  option changed: no VAD, beam 5, the fallback, each window prompted) on each chunk;
- ``carried``: faster-whisper's defaults on each chunk, in order, the first window of a
  chunk prompted with the tokens the chunk before wrote since its prompt last started
  afresh (:func:`carried_prompt`): what one decode of the whole file would prompt it with;
- ``resumed``: ``carried``, and each chunk also carries the last
  :data:`WINDOW_SECONDS` of the one before (its lead-in): the window the chunk before
  was cut in by its end is dropped there and decoded whole here, from where it began
  (:func:`resumed_in_chunks`), so the windows fall where one decode of the file puts them;
- ``resumed+words``: ``resumed`` with word timestamps, as ingest needs them (units are cut
  by their words' times); faster-whisper then starts a window after the last word heard;
- ``resumed+floor``: ``resumed``, each chunk's features floored as the whole file's are
  (:func:`file_floor`): Whisper's log-mel features are clamped 8 (log10) below the
  loudest of all the audio it is given, so a chunk quieter than the file's loudest
  moment otherwise keeps quieter detail than one decode of the file sees;
- ``resumed+floor+words``: ``resumed+floor`` with word timestamps;
- ``defaults``: faster-whisper's defaults on the whole file, heard again (against the
  kept hearing: whether the defaults hear the same twice);
- ``defaults+words``: faster-whisper's defaults on the whole file with word timestamps
  (each window then starts after the last word heard, not where the text's last
  timestamp put it): what word times alone change in the defaults' text;
- ``defaults+aligned``: the defaults on the whole file, each segment's word times found
  afterwards by faster-whisper's own alignment on the window it was written in
  (:func:`aligned`), scored as the words found: the defaults' text with word times;
- ``defaults+nudged``: the same with every feature one float32 step higher (the last bit
  of the input, as another CPU or another chunk's arithmetic may give it): how many facts
  the defaults' own transcript changes for nothing heard differently.

Scored as :mod:`benchmarks.long_lead_ins` scores segments (not stored units): the facts
heard, the word error rate, whole and per reading, and the facts the defaults' kept
transcript (a ``long_transcripts.py --keep DIR`` run's, required) hears that the recipe
lacks. CPU seconds are this process's while it transcribes, with the load beside them:
the machine is shared. ``--keep`` also receives each recipe's segments
(``STEM-RECIPE-in-chunks.json``; ``benchmarks/long_windows.py --ours RECIPE-in-chunks``
explains them), and a later run scores what is kept there instead of hearing it again
(no CPU figure then). ``--chunk-seconds`` hears in chunks of another length (longer than
the recording: in one piece), kept apart from the 600 s ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from functools import partial
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.long_lead_ins import CHUNK_SECONDS, by_part, heard_in_chunks, lacking  # noqa: E402
from benchmarks.long_speech import DEFAULT_CACHE  # noqa: E402
from benchmarks.long_transcripts import (  # noqa: E402
    DEFAULTS,
    FALLBACK,
    Heard,
    Material,
    part_error_rate,
    real_material,
    spoken_words,
    synthetic_material,
)
from benchmarks.scoring import error_rate  # noqa: E402

RECIPES = (
    "ours",
    "ours-words",
    "seek",
    "ours+fallback",
    "seek+fallback",
    "defaults-chunked",
    "carried",
    "resumed",
    "resumed+words",
    "resumed+floor",
    "resumed+floor+words",
    DEFAULTS,
    "defaults+words",
    "defaults+aligned",
    "defaults+nudged",
)
WINDOW_SECONDS = 30.0
"""Whisper's window: the longest stretch a window cut by a chunk's end began before it."""
PROMPT_RESET_ON_TEMPERATURE = 0.5
"""faster-whisper's default: after a window decoded hotter, the prompt starts afresh."""
PROMPT_TOKENS = 223
"""The last tokens written that faster-whisper prompts a window with (half its context)."""
LOG_MEL_RANGE = 2.0
"""How far below their loudest Whisper's features are clamped (8 log10 units, scaled by 4)."""
TIME_PER_FRAME = 0.01
PREPEND_PUNCTUATIONS = "\"'“¿([{-"
APPEND_PUNCTUATIONS = "\"'.。,，!！?？:：”)]}、"
"""faster-whisper's defaults: punctuation joined to the word after or before it."""
"""Seconds per frame of Whisper's features (a segment's ``seek`` counts them)."""


def whole_speech(kept: Sequence[tuple[int, int]], utterances: object) -> list[float]:
    """One clip over all of ``kept`` joined end to end (faster-whisper's
    ``clip_timestamps`` in seconds): faster-whisper then windows it as it windows a file."""
    from llama_index_video.transcription.base import SAMPLE_RATE

    return [0.0, sum(end - start for start, end in kept) / SAMPLE_RATE]


@contextmanager
def seek_windows() -> Iterator[None]:
    """Within it, the default decoding hands faster-whisper the speech as one clip
    (:func:`whole_speech`) instead of clips that end in pauses."""
    from llama_index_video.transcription import faster_decoding

    pauses = faster_decoding.clip_timestamps
    faster_decoding.clip_timestamps = whole_speech  # type: ignore[assignment]
    try:
        yield
    finally:
        faster_decoding.clip_timestamps = pauses


def defaults_model() -> Any:
    from faster_whisper import WhisperModel

    from llama_index_video.transcription.models import DEFAULT_MODEL, resolve_model

    return WhisperModel(str(resolve_model(DEFAULT_MODEL).path), compute_type="int8")


def _defaults_chunked(material: Material, chunk_seconds: float) -> list[Heard]:
    from llama_index_video.media.audio import iter_audio_chunks

    model = defaults_model()
    heard: list[Heard] = []
    for chunk in iter_audio_chunks(material.audio, chunk_seconds=chunk_seconds):
        segments, _ = model.transcribe(chunk.samples)
        heard += [Heard(s.start + chunk.start, s.end + chunk.start, s.text) for s in segments]
    return heard


def carried_prompt(prompt: Sequence[int], segments: Sequence[Any]) -> list[int]:
    """The tokens that prompt the window after ``segments`` (faster-whisper's), when the
    first of them was prompted with ``prompt``: all of them since the last window decoded
    hotter than :data:`PROMPT_RESET_ON_TEMPERATURE`, as faster-whisper keeps them."""
    tokens = list(prompt)
    for segment in segments:
        if segment.temperature > PROMPT_RESET_ON_TEMPERATURE:
            tokens = []
        else:
            tokens += segment.tokens
    return tokens[-PROMPT_TOKENS:]


class AlteredFeatures:
    """faster-whisper's feature extractor, its features passed through ``alter``."""

    def __init__(self, extractor: Any, alter: Callable[[np.ndarray], np.ndarray]) -> None:
        self._extractor = extractor
        self._alter = alter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._extractor, name)

    def __call__(self, waveform: np.ndarray, **options: Any) -> np.ndarray:
        return self._alter(self._extractor(waveform, **options))


def _aligned(material: Material, chunk_seconds: float) -> list[Heard]:
    """The defaults on the whole file, word times found afterwards (:func:`aligned`);
    each stretch written as its words, so a word the alignment lost is a word missing."""
    from faster_whisper import decode_audio

    model = defaults_model()
    audio = decode_audio(str(material.audio))
    segments, info = model.transcribe(audio)
    return [
        Heard(words[0]["start"], words[-1]["end"], "".join(w["word"] for w in words))
        for words in aligned(model, audio, list(segments), info.language)
        if words
    ]


def aligned(model: Any, audio: np.ndarray, segments: Sequence[Any], language: str) -> list[Any]:
    """The words of each of faster-whisper's ``segments`` (decoded from ``audio`` without
    word timestamps), as its own ``word_timestamps`` finds them: the same alignment, on
    the encoder's output for the window each segment was written in (``seek``). Asked
    while decoding, word timestamps also move where the next window starts (after the
    last word heard), so the text is no longer the defaults'; found afterwards, it is."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.tokenizer import Tokenizer

    features = model.feature_extractor(audio)
    content_frames = features.shape[-1] - 1
    tokenizer = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language
    )
    last_speech = 0.0
    words: list[Any] = []
    for seek, window in groupby(segments, key=lambda segment: segment.seek):
        frames = min(model.feature_extractor.nb_max_frames, content_frames - seek)
        encoded = model.encode(pad_or_trim(features[:, seek : seek + frames]))
        written = [
            {"seek": seek, "start": s.start, "end": s.end, "tokens": list(s.tokens)} for s in window
        ]
        last_speech = model.add_word_timestamps(
            [written],
            tokenizer,
            encoded,
            frames,
            PREPEND_PUNCTUATIONS,
            APPEND_PUNCTUATIONS,
            last_speech_timestamp=last_speech,
        )
        words += [segment["words"] for segment in written]
    return words


def _nudged(material: Material, chunk_seconds: float) -> list[Heard]:
    """The defaults on the whole file, every feature one float32 step higher."""
    model = defaults_model()
    model.feature_extractor = AlteredFeatures(
        model.feature_extractor, lambda features: np.nextafter(features, np.float32(np.inf))
    )
    segments, _ = model.transcribe(str(material.audio))
    return [Heard(s.start, s.end, s.text) for s in segments]


def file_floor(material: Material, chunk_seconds: float, extractor: Any) -> float:
    """The floor of the whole file's features (scaled): 2 below the loudest of its chunks'."""
    from llama_index_video.media.audio import iter_audio_chunks

    chunks = iter_audio_chunks(material.audio, chunk_seconds=chunk_seconds)
    return max(float(extractor(chunk.samples).max()) for chunk in chunks) - LOG_MEL_RANGE


def resumed_in_chunks(
    material: Material,
    chunk_seconds: float,
    *,
    resume: bool,
    words: bool = False,
    floor: bool = False,
) -> list[Heard]:
    """faster-whisper's defaults (``words``: with word timestamps) on each chunk in order,
    each prompted as one decode of the file would prompt it (:func:`carried_prompt`);
    with ``resume`` the window a chunk's end cut is decoded again, whole, from where it
    began, at the start of the next chunk; with ``floor`` the features of every chunk are
    floored as the whole file's are (:func:`file_floor`)."""
    from llama_index_video.media.audio import SAMPLE_RATE, iter_audio_chunks

    model = defaults_model()
    if floor:
        extractor = model.feature_extractor
        at = file_floor(material, chunk_seconds, extractor)
        model.feature_extractor = AlteredFeatures(extractor, lambda f: np.maximum(f, at))
    lead = WINDOW_SECONDS + 1.0 if resume else 0.0
    heard: list[Heard] = []
    cut: list[Heard] = []  # the window the last chunk's end cut: heard again by the next
    prompt: list[int] = []
    resume_at: float | None = None
    chunks = iter_audio_chunks(material.audio, chunk_seconds=chunk_seconds, lead_in_seconds=lead)
    for chunk in chunks:
        origin = chunk.start - len(chunk.lead_in) / SAMPLE_RATE
        samples = np.concatenate([chunk.lead_in, chunk.samples])
        since = chunk.start if resume_at is None else resume_at
        segments, _ = model.transcribe(
            samples,
            initial_prompt=prompt or None,
            clip_timestamps=[since - origin],
            word_timestamps=words,
        )
        written = list(segments)
        last = [s for s in written if resume and s.seek == written[-1].seek]
        resume_at = origin + last[0].seek * TIME_PER_FRAME if last else None
        # Decoded again by the next chunk only from within its lead-in (this chunk's last
        # seconds), and only when it is not this chunk's first window (no step forward).
        lead_in = max(chunk.start, chunk.end - lead + 1.0)
        if resume_at is None or resume_at <= since or resume_at < lead_in:
            last, resume_at = [], None
        kept = written[: len(written) - len(last)]
        heard += [Heard(s.start + origin, s.end + origin, s.text) for s in kept]
        cut = [Heard(s.start + origin, s.end + origin, s.text) for s in last]
        prompt = carried_prompt(prompt, kept)
    return heard + cut  # the last chunk's last window, cut by the end of the file


def _defaults(material: Material, chunk_seconds: float, *, words: bool = False) -> list[Heard]:
    segments, _ = defaults_model().transcribe(str(material.audio), word_timestamps=words)
    return [Heard(s.start, s.end, s.text) for s in segments]


def hearer(recipe: str) -> Callable[[Material, float], list[Heard]]:
    """How ``recipe`` (one of :data:`RECIPES`) hears a material in chunks of the seconds
    given (the defaults: the whole file whatever they are)."""
    if recipe == "defaults-chunked":
        return _defaults_chunked
    if recipe == DEFAULTS:
        return _defaults
    if recipe == "defaults+words":
        return partial(_defaults, words=True)
    if recipe == "defaults+aligned":
        return _aligned
    if recipe == "defaults+nudged":
        return _nudged
    if recipe.startswith(("carried", "resumed")):
        return partial(
            resumed_in_chunks,
            resume=recipe != "carried",
            words="+words" in recipe,
            floor="+floor" in recipe,
        )

    def ours(material: Material, chunk_seconds: float) -> list[Heard]:
        from llama_index_video.transcription.faster import FasterWhisperTranscriber

        temperature = FALLBACK if recipe.endswith("+fallback") else 0.0
        transcriber = FasterWhisperTranscriber(
            language="en", temperature=temperature, word_timestamps=recipe != "ours-words"
        )
        with seek_windows() if recipe.startswith("seek") else nullcontext():
            return heard_in_chunks(
                material, 0.0, transcriber=transcriber, chunk_seconds=chunk_seconds
            )

    return ours


def _row(
    material: Material, name: str, heard: Sequence[Heard], defaults: Sequence[Heard], cpu: str
) -> str:
    """The table row of what ``name`` heard: facts, WER (facts lacking), per reading."""
    said = spoken_words(material.said)
    wer = error_rate(said, spoken_words(" ".join(h.text for h in heard)))
    lacks = lacking(material, heard, defaults)
    cells = [f"{len(material.heard(heard))}", f"{wer:.2%} ({len(lacks)})"]
    if lacks and not material.parts:
        cells[1] += f" {', '.join(lacks[:6])}"
    shares = by_part(material, lacks)
    cells += [f"{part_error_rate(p, heard):.2%} ({shares[p.name]})" for p in material.parts]
    return f"| {name} | {' | '.join(cells)} | {cpu} | {load_average()} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", nargs="+", choices=RECIPES, default=list(RECIPES))
    parser.add_argument("--minutes", nargs="*", type=float, default=[20.0], help="synthetic")
    parser.add_argument("--no-hour", action="store_true", help="leave the hour out")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--keep", type=Path, required=True, help="a long_transcripts.py --keep")
    parser.add_argument(
        "--chunk-seconds", type=float, default=CHUNK_SECONDS, help="ingest's chunks: 600"
    )
    args = parser.parse_args(argv)
    materials = [] if args.no_hour else [real_material("hour", args.cache.parent / "long_real")]
    materials += [synthetic_material(minutes, args.cache) for minutes in args.minutes]
    chunks = args.chunk_seconds
    kept_as = "in-chunks" if chunks == CHUNK_SECONDS else f"in-{chunks:.0f}s-chunks"
    for material in materials:
        kept = args.keep / f"{material.audio.stem}-{DEFAULTS}.json"
        if not kept.is_file():
            raise SystemExit(f"{kept}: not found; run benchmarks/long_transcripts.py --keep first")
        defaults = [Heard(**h) for h in json.loads(kept.read_text())["heard"]]
        names = [part.name for part in material.parts]
        print(f"\n## {material.name}, in {chunks:.0f} s chunks: WER (facts lacking)\n")
        print(f"| recipe | facts heard | whole | {' | '.join([*names, ''])}CPU s | load |")
        print(f"|---|---|---|{'---|' * len(names)}---|---|")
        print(_row(material, "defaults, kept (the bar)", defaults, defaults, "-"), flush=True)
        for recipe in args.recipes:
            out = args.keep / f"{material.audio.stem}-{recipe}-{kept_as}.json"
            cpu = "-"
            if out.is_file():  # heard in an earlier run: scored again
                heard = [Heard(**h) for h in json.loads(out.read_text())["heard"]]
            else:
                started = time.process_time()
                heard = hearer(recipe)(material, chunks)
                cpu = f"{time.process_time() - started:.0f}"
                out.write_text(json.dumps({"heard": [asdict(h) for h in heard]}))
            print(_row(material, recipe, heard, defaults, cpu), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
