"""The language a recording heard chunk by chunk (``ingest --live``) has been heard in so far.

A live recording is transcribed a chunk at a time (30 s by default), and each chunk's
language found on its own (:mod:`.language`) is found over far less speech than an
ingest of the whole file hears, where a block may only take a language that the probes
of the whole recording point to or that a block heard decisively. A chunk alone has no
such context: a new user's live recording of an English meeting (AMI) stored a 30 s chunk
as Bosnian, transcribed as nonsense, and the first 10 s of ``ami_trn05`` alone are French
to the head at 0.2 and not written best in English.

So what was heard carries forward: once a stretch is heard at
:data:`~.language.DECISIVE` or more, its language is *settled*, and a later chunk's
block takes another language only on strong evidence over enough speech
(:func:`~.language.detect_stretches`' ``settled``): at least
:data:`~.speech_blocks.MIN_BLOCK_SPEECH_S` of speech, heard in that language at
:data:`~.language.DECISIVE` or more, or written best in English and heard English at
half the settled language or more, as a run of English blocks beside another language
keeps English in a whole file. Otherwise the block keeps the settled language. A
recording that changes language is heard decisively in the new one, so it switches in
the chunk where the change is, or the next. A chunk with no decisive stretch leaves the
settled language as it was; before the first decisive one, chunks are heard on their
own. ``benchmarks/live_languages.py`` measures it (docs/evaluation.md).

A transcriber that hears a chunk's language as a whole, from one set of probabilities
(:mod:`.openai_whisper`), asks :meth:`RecordingLanguage.language_of`: the same rule, the
chunk as one block.

The follower holds one :class:`RecordingLanguage` per recording, stores its settled
language with each chunk (:mod:`llama_index_video.store.live`), so a run stopped and
started again goes on from it, and transcribes each chunk inside :func:`heard_in` (a
context, as :func:`~.base.audio_from`, so transcribers written for the protocol keep
working); a transcriber that finds languages reads it with :func:`recording_language`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from llama_index_video.transcription.language import (
    DECISIVE,
    LanguageStretch,
    Probabilities,
    keeps_label,
)


@dataclass
class RecordingLanguage:
    """What one recording has been heard in so far (see the module docstring).

    Attributes:
        settled: The language of the last stretch heard decisively; None before one.
    """

    settled: str | None = None

    def heard(self, stretches: Sequence[LanguageStretch]) -> None:
        """Take note of a chunk's stretches, in time order."""
        for stretch in stretches:
            if stretch.probability >= DECISIVE:
                self.settled = stretch.language

    def language_of(self, heard: Probabilities, *, speech_s: float) -> str:
        """The language of a chunk heard as a whole (``heard``: the language head's
        probabilities over it; ``speech_s``: the seconds of speech they were heard over):
        the likeliest, unless the recording is settled in another and the evidence for
        the likeliest is not strong (the rule of :func:`~.language.detect_stretches`'
        ``settled``, for a block that was not written down)."""
        code = max(heard, key=heard.__getitem__)
        if self.settled is None or keeps_label(
            heard, code, self.settled, written_english=False, speech_s=speech_s
        ):
            return code
        return self.settled


_RECORDING: ContextVar[RecordingLanguage | None] = ContextVar("recording_language", default=None)


@contextmanager
def heard_in(recording: RecordingLanguage) -> Iterator[None]:
    """Within it, the audio handed to a transcriber is the next chunk of ``recording``."""
    token = _RECORDING.set(recording)
    try:
        yield
    finally:
        _RECORDING.reset(token)


def recording_language() -> RecordingLanguage | None:
    """The recording the audio a transcriber is given belongs to (:func:`heard_in`), if any."""
    return _RECORDING.get()
