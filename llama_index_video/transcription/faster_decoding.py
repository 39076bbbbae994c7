"""One faster-whisper pass over audio, turned into this package's segments.

:class:`~llama_index_video.transcription.faster.FasterWhisperTranscriber` decides which
model hears which stretch of the audio, told which language (a :class:`Pass`); this
module runs one such pass: the call to the model with the transcriber's
:class:`Decoding` options, the whole audio cut to its speech from the VAD the language
check already heard (so Silero runs once), faster-whisper's segments moved onto the
source's timeline and clamped to it, repetition loops decoded again
(:func:`.loops.mend`, deterministic, no prompt, with each remedy's penalties) and what
still loops listed as dropped, words a window skipped decoded again
(:func:`.skips.filled`), and errors raised while decoding (CTranslate2 raises
plain ``RuntimeError``) made :class:`~llama_index_video.errors.TranscriptionError`.

With ``condition_on_previous_text`` (the default), the whole audio is decoded in one call
over clips that end in pauses (:mod:`.windows`) and faster-whisper prompts each window
with the text written before it, as its own default decoding does: a recording's names
and recurring words are then heard as they were the first time ("debtors", "steward"
rather than "depthers", "stuart"). faster-whisper starts the prompt afresh only after a
window it decoded hotter than 0.5, which deterministic decoding (temperature 0) never
does: a repetition loop would prompt every later window (on a 20-minute recording one
loop ate a chunk's ten minutes). So the call is stopped at a segment that loops
(:func:`.loops.loop_reason`), or that ends a run of segments saying one same text
(:func:`.loops.ends_a_run`), and the clips after it are decoded by a new call, from its
end, with no prompt (:func:`_prompted`); the loop itself is decoded again as any
other. With the option off each window is decoded with no prompt (docs/evaluation.md,
long recordings, compares the two).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

import numpy as np

from llama_index_video.errors import TranscriptionError
from llama_index_video.transcription.base import SAMPLE_RATE, DroppedSpeech, Segment, Word
from llama_index_video.transcription.loops import (
    Redecode,
    Remedy,
    ends_a_run,
    loop_reason,
    mend,
    mended,
)
from llama_index_video.transcription.models import ResolvedModel
from llama_index_video.transcription.skips import SpeechSeconds, filled, heard
from llama_index_video.transcription.vad import TRANSCRIPTION, UTTERANCES, VoiceActivity
from llama_index_video.transcription.windows import clip_timestamps

if TYPE_CHECKING:
    from faster_whisper import WhisperModel
    from faster_whisper.transcribe import Segment as FasterSegment
    from faster_whisper.transcribe import TranscriptionInfo as FasterInfo

FRAME_SECONDS: Final = 0.02
"""Whisper's timestamp step: a restart after a loop begins at least this much later."""


@dataclass(frozen=True, kw_only=True)
class Decoding:
    """How the model decodes (the transcriber's options of the same names)."""

    beam_size: int
    temperature: float | tuple[float, ...]
    vad_filter: bool
    word_timestamps: bool
    condition_on_previous_text: bool
    initial_prompt: str | None


@dataclass(frozen=True)
class Pass:
    """One call to a model: a stretch of the audio and the language it is told."""

    start: float
    end: float
    language: str | None
    resolved: ResolvedModel
    whisper: WhisperModel


@dataclass(frozen=True)
class Decoded:
    """A pass started: its segments (decoded as they are read) and what the model said
    of the audio at once."""

    segments: Iterator[Segment]
    language: str
    probability: float | None
    duration_after_vad: float


def decode(
    run: Pass,
    activity: VoiceActivity,
    where: str,
    dropped: list[DroppedSpeech],
    *,
    options: Decoding,
    whole: bool,
    before: np.ndarray | None = None,
) -> Decoded:
    """Start decoding ``run`` (the whole audio, or its stretch of it).

    The whole audio is cut to its speech here, as faster-whisper's ``vad_filter``
    would (its spans, and quiet speech after louder speech it misses, :mod:`.vad`), from
    the VAD the language check heard: Silero hears the audio once;
    windows end in its pauses (:mod:`.windows`). A stretch is left to faster-whisper's
    own VAD. A loop is decoded again (:func:`.loops.mend`); what still loops is appended
    to ``dropped``. ``before``, the audio just before the whole audio (a chunk's
    lead-in), is heard for the first window's prompt when windows are prompted
    (:func:`lead_in_prompt`).
    """
    samples = activity.samples
    first, last = round(run.start * SAMPLE_RATE), round(run.end * SAMPLE_RATE)
    part = samples if whole else samples[first:last]
    try:
        kept = activity.spans(TRANSCRIPTION) if whole and options.vad_filter else None
        clips: list[float] | str = "0"  # faster-whisper's "all of it"
        if kept:
            part = np.concatenate([samples[start:end] for start, end in kept])
            clips = clip_timestamps(kept, activity.spans(UTTERANCES))
        elif kept is not None:
            part = part[:0]
        elif whole and options.condition_on_previous_text:
            clips = clip_timestamps([(0, len(part))], activity.spans(UTTERANCES))
        if isinstance(clips, list) and options.condition_on_previous_text and len(part):
            heard = lead_in_prompt(run, before, options) if before is not None else None
            segments, info = _prompted(run, part, clips, options, prompt=heard)
        else:
            segments, info = run.whisper.transcribe(
                part,
                language=run.language,
                beam_size=options.beam_size,
                temperature=options.temperature,
                vad_filter=options.vad_filter and kept is None,
                word_timestamps=options.word_timestamps,
                condition_on_previous_text=False,
                initial_prompt=options.initial_prompt,
                clip_timestamps=clips,
            )
    except Exception as exc:  # ctranslate2 and onnxruntime raise plain RuntimeErrors
        raise TranscriptionError(
            f"faster-whisper failed on {where} with model {run.resolved.name!r}: {exc}"
        ) from exc
    if kept:
        from faster_whisper.transcribe import restore_speech_timestamps

        chunks = [{"start": start, "end": end} for start, end in kept]
        segments = restore_speech_timestamps(segments, chunks, SAMPLE_RATE)
    detected = run.language is None and bool(run.whisper.model.is_multilingual)
    offset = 0.0 if whole else run.start
    language = run.language or info.language

    redecode = _redecode(run, samples, language, options)

    def again(loop: Segment, reason: str) -> list[Segment]:
        return mend(loop, reason, redecode, where=where, model=run.resolved.name, into=dropped)

    return Decoded(
        segments=_convert(
            segments,
            len(samples) / SAMPLE_RATE,
            where,
            run.resolved.name,
            offset=offset,
            until=len(samples) / SAMPLE_RATE if whole else run.end,
            language=language,
            mend=again,
            speech=lambda start, end: activity.seconds(UTTERANCES, start, end),
            redecode=redecode,
            dropped=dropped,
        ),
        language=info.language,
        probability=float(info.language_probability) if detected else None,
        duration_after_vad=float(info.duration_after_vad),
    )


def _prompted(
    run: Pass,
    part: np.ndarray,
    clips: list[float],
    options: Decoding,
    *,
    prompt: str | None = None,
) -> tuple[Iterator[FasterSegment], FasterInfo]:
    """Decode ``part`` over ``clips`` (as :func:`.windows.clip_timestamps` gives them)
    with faster-whisper's own prompting, each window prompted with the text before it,
    started afresh after a repetition loop or a run (:func:`_restarts`,
    :func:`restart_after`): faster-whisper at temperature 0 never resets its prompt and
    would hand the loop to every later window.
    The first window's prompt is ``prompt`` (:func:`lead_in_prompt`), else the user's
    ``initial_prompt``. Segments on ``part``'s timeline; the first call is made
    here (its info, the language, at once), the others as the segments are read."""

    def call(
        since: list[float], language: str | None, prompt: str | None
    ) -> tuple[Iterable[FasterSegment], FasterInfo]:
        return run.whisper.transcribe(
            part,
            language=language,
            beam_size=options.beam_size,
            temperature=options.temperature,
            vad_filter=False,
            word_timestamps=options.word_timestamps,
            condition_on_previous_text=True,
            initial_prompt=prompt,
            clip_timestamps=since,
        )

    opening, info = call(clips, run.language, prompt or options.initial_prompt)
    language = run.language or info.language

    def segments() -> Iterator[FasterSegment]:
        written = iter(opening)
        at = clips[0]
        while True:  # each restart begins later than the one before: ends with the clips
            loop = None
            said: list[str] = []
            for segment in written:
                yield segment
                said.append(segment.text)
                if _restarts(segment, said, language):
                    loop = segment
                    break
            if loop is None:
                return
            at = max(float(loop.end), at + FRAME_SECONDS)
            since = restart_after(clips, at)
            if not since:
                return
            written = iter(call(since, language, None)[0])

    return segments(), replace(info, duration_after_vad=len(part) / SAMPLE_RATE)


def lead_in_prompt(run: Pass, before: np.ndarray, options: Decoding) -> str | None:
    """What is said in ``before`` (the audio just before a chunk of a longer recording),
    decoded as the chunk is (its speech in clips ending in pauses, each window prompted
    with the text before it), as the prompt of the chunk's first window: a chunk then
    starts prompted with what was said just before it, as in one long decode, yet is
    heard on its own (a chunk need not wait for the one before; Ray workers write what a
    local ingest writes).

    The user's ``initial_prompt``, then the text written since the last repetition loop
    or run (the prompt restarts there, :func:`_restarts`); faster-whisper keeps its last 223
    tokens. Text, not the segments' tokens with their timestamps as faster-whisper's own
    prompt holds them: on the real hour (docs/evaluation.md, long recordings) text
    wrote fewer wrong words (5.40 % against 5.50 %), though the window after it tends to
    come out as one segment (units are cut by their words' times). None when nothing is
    written or the language is not known yet."""
    if run.language is None or not len(before):
        return None
    activity = VoiceActivity(before)
    kept = activity.spans(TRANSCRIPTION)
    if not kept:
        return None
    part = np.concatenate([before[start:end] for start, end in kept])
    clips = clip_timestamps(kept, activity.spans(UTTERANCES))
    segments, _ = _prompted(run, part, clips, options)
    written: list[str] = []
    said: list[str] = []
    for segment in segments:
        said.append(segment.text)
        if _restarts(segment, said, run.language):
            written.clear()
            said.clear()
        elif segment.text.strip():
            written.append(segment.text.strip())
    if not written:
        return None
    return " ".join([options.initial_prompt, *written] if options.initial_prompt else written)


def restart_after(clips: Sequence[float], seconds: float) -> list[float]:
    """The clips (flat ``[start, end, ...]``) from ``seconds`` on: the one it falls in
    cut to start there, and the ones after it."""
    restarted: list[float] = []
    for start, end in zip(clips[::2], clips[1::2], strict=True):
        if end > seconds:
            restarted += [max(start, seconds), end]
    return restarted


def _restarts(segment: FasterSegment, said: Sequence[str], language: str | None) -> bool:
    """Whether the prompt restarts after ``segment``, the last of ``said`` (the texts
    written since the prompt started): it loops, or it ends a run (:func:`.loops.ends_a_run`)."""
    return _loops(segment, language) or ends_a_run(said)


def _loops(segment: FasterSegment, language: str | None) -> bool:
    """Whether faster-whisper's ``segment`` is a repetition loop (:func:`.loops.loop_reason`)."""
    ours = _segment(segment, math.inf, offset=0.0, language=language)
    return ours is not None and loop_reason(ours) is not None


def _redecode(run: Pass, samples: np.ndarray, language: str, options: Decoding) -> Redecode:
    """How :func:`.loops.mend` and :func:`.skips.filled` decode a piece of ``samples``
    again: deterministic, no prompt, with the remedy's penalties."""
    duration = len(samples) / SAMPLE_RATE

    def decode_again(start: float, end: float, remedy: Remedy) -> Iterator[Segment]:
        piece = samples[round(start * SAMPLE_RATE) : round(end * SAMPLE_RATE)]
        segments, _ = run.whisper.transcribe(
            piece,
            language=language,
            beam_size=options.beam_size,
            temperature=0.0,
            vad_filter=options.vad_filter,
            word_timestamps=options.word_timestamps,
            condition_on_previous_text=False,
            repetition_penalty=remedy.repetition_penalty,
            no_repeat_ngram_size=remedy.no_repeat_ngram_size,
        )
        for segment in segments:
            converted = _segment(segment, duration, offset=start, language=language)
            if converted is not None:
                yield converted

    return decode_again


def _convert(
    segments: Iterable[FasterSegment],
    duration: float,
    where: str,
    model: str,
    *,
    offset: float = 0.0,
    until: float,
    language: str | None = None,
    mend: Callable[[Segment, str], list[Segment]],
    speech: SpeechSeconds,
    redecode: Redecode,
    dropped: list[DroppedSpeech],
) -> Iterator[Segment]:
    """Turn faster-whisper segments into ours (``offset`` seconds later, on the source's
    timeline), repetition loops into what ``mend`` makes of them (:func:`.loops.mended`;
    the decoded audio ends at ``until``), segments that skipped ``speech`` and speech no
    segment covers into what ``redecode`` hears there (:func:`.skips.filled`,
    :func:`.skips.heard`; what it still does not hear is appended to ``dropped``), and
    errors raised mid-stream into ours."""
    try:
        ours = (_segment(s, duration, offset=offset, language=language) for s in segments)
        kept = mended((s for s in ours if s is not None), since=offset, until=until, mend=mend)
        whole = filled(kept, until=until, speech=speech, redecode=redecode, where=where)
        yield from heard(
            whole,
            since=offset,
            until=until,
            speech=speech,
            redecode=redecode,
            where=where,
            into=dropped,
        )
    except Exception as exc:  # ctranslate2 raises plain RuntimeErrors while decoding
        raise TranscriptionError(
            f"faster-whisper failed while decoding {where} with model {model!r}: {exc}"
        ) from exc


def _segment(
    segment: FasterSegment, duration: float, *, offset: float, language: str | None
) -> Segment | None:
    """One faster-whisper segment as ours, ``offset`` seconds later and within
    ``duration``; None when it wrote nothing."""
    text = segment.text.strip()
    if not text:
        return None
    start = min(max(float(segment.start) + offset, 0.0), duration)
    end = min(max(float(segment.end) + offset, start), duration)
    words = tuple(
        Word(
            start=min(max(float(word.start) + offset, start), end),
            end=min(max(float(word.end) + offset, start), end),
            text=word.word.strip(),
            probability=float(word.probability),
        )
        for word in segment.words or ()
        if word.word.strip()
    )
    return Segment(start=start, end=end, text=text, words=words, language=language)
