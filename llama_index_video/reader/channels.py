"""Two voices on two channels: a call recorder's stereo, heard one channel at a time.

Call recorders and two-microphone interviews write each person on a channel of their
own. Mixed to one, whoever talks over the other is lost: on real speech (the LibriVox
reader left, LJ Speech's reader right, turns overlapping by 1 s;
``benchmarks/stereo_speakers.py``) tiny.en kept 65 % of the left speaker's words from
the downmix and 97 % from the left channel alone; talking at once, 10 % against 97 %.

So a stereo track is heard channel by channel when its channels hold two voices: each
has speech (:data:`MIN_SPEECH_SECONDS` in its first :data:`PROBE_SECONDS`) and their
loudness moves apart, the correlation of their 50 ms loudness envelopes under
:data:`MAX_ENVELOPE_CORRELATION`. One voice through two microphones, or a stereo mix,
moves both channels together whatever the delay between them (0.9 and more); two people
taking turns move them apart (around 0, below when they never overlap). The speaker of
each unit is then its channel's: ``SPEAKER_1`` left, ``SPEAKER_2`` right. Held out
(``benchmarks/stereo_speakers.py --held-out``, real speech): 14 of 15 other pairs of
voices split (-0.38 to 0.24; each voice leaking 6 dB under into the other's channel,
0.64, does not) and 54 of 54 single recordings through two simulated microphones (1-30 ms
apart, quieter, low-passed, noisy, echoing) stay mixed (0.77 to 1.00).

Two lapel microphones in one room also hear the other person, a little quieter, and a
channel heard alone is transcribed with the other's words in it too. So each channel
keeps only its words where it is the louder one (:func:`louder_only`): over a word's span
its loudness no more than :data:`LEAK_MARGIN_DB` under the other channel's. A leak is
as far under as the room makes it (12-30 dB); two people talking at once are both loud,
and both are kept. See ``docs/evaluation.md``, "Two voices on two channels".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

import numpy as np

from llama_index_video.media.audio import SAMPLE_RATE, iter_audio_chunks
from llama_index_video.media.probe import MediaInfo
from llama_index_video.speakers.base import speaker_name
from llama_index_video.transcription.base import Segment, Word
from llama_index_video.transcription.vad import UTTERANCES, VoiceActivity

PROBE_SECONDS: Final = 120.0
"""How much of the start of a file the decision hears."""
MIN_SPEECH_SECONDS: Final = 2.0
"""Seconds of speech each channel needs in the probe (fewer: one channel is silent)."""
MAX_ENVELOPE_CORRELATION: Final = 0.5
"""Loudness envelopes correlated at least this much are one sound on two channels."""
ENVELOPE_SECONDS: Final = 0.05
LEAK_MARGIN_DB: Final = 6.0
"""A channel's word is kept where, in some 50 ms of it, the channel is at most this much
quieter than the other (further under all through: the other voice leaking in)."""
BY_CHANNEL_NOTE: Final = "two voices on two channels"
"""How the note of a file heard one channel at a time begins."""
SOUND_SHARE: Final = 0.01
"""A word's 50 ms with less than this share of its loudest one's power (20 dB under)
are silence, not compared."""


def two_voices(info: MediaInfo, *, track: int) -> float | None:
    """The correlation of the two channels' loudness envelopes when audio ``track`` (from
    1) of the probed file holds two voices, one a channel (see the module docstring);
    None when it does not (or is not stereo)."""
    if info.audio_tracks[track - 1].channels != 2:
        return None
    heard = [_start(info, track=track, channel=channel) for channel in (0, 1)]
    if any(len(samples) == 0 for samples in heard):
        return None
    end = len(heard[0]) / SAMPLE_RATE
    if any(VoiceActivity(s).seconds(UTTERANCES, 0.0, end) < MIN_SPEECH_SECONDS for s in heard):
        return None
    left, right = (loudness_envelope(samples) for samples in heard)
    if left.std() == 0 or right.std() == 0:
        return None
    correlation = float(np.corrcoef(left, right)[0, 1])
    return correlation if correlation < MAX_ENVELOPE_CORRELATION else None


def _start(info: MediaInfo, *, track: int, channel: int) -> np.ndarray:
    """The first :data:`PROBE_SECONDS` of one channel (the decoder closes with the
    generator, dropped at once)."""
    chunks = iter_audio_chunks(
        info.path,
        chunk_seconds=PROBE_SECONDS,
        track=track,
        channel=channel,
        duration=info.duration,
    )
    first = next(chunks, None)
    return np.zeros(0, np.float32) if first is None else first.samples


def loudness_envelope(samples: np.ndarray) -> np.ndarray:
    """Root-mean-square loudness of each :data:`ENVELOPE_SECONDS` of ``samples``."""
    frame = int(ENVELOPE_SECONDS * SAMPLE_RATE)
    usable = len(samples) - len(samples) % frame
    return np.sqrt(np.square(samples[:usable].reshape(-1, frame)).mean(axis=1))


def heard_by_channel(notes: str) -> bool:
    """Whether a file's stored ``notes`` say ingest heard its channels one at a time."""
    return BY_CHANNEL_NOTE in notes


def channel_speaker(channel: int) -> str:
    """The label of the units heard on ``channel`` (0: ``SPEAKER_1`` left, 1: right)."""
    return speaker_name(channel + 1)


def heard_channels(
    path: str | Path,
    spans: Mapping[str, Sequence[tuple[float, float]]],
    *,
    track: int,
    duration: float | None,
) -> dict[str, int]:
    """The channel (0 left, 1 right) each speaker of ``spans`` (``(start, end)`` seconds
    of its units) was heard on, in a file heard one channel at a time: a label's own
    (:func:`channel_speaker`); a name given since, the channel louder over its units,
    each channel's loudness against its own over the whole file (with both people
    talking all the while, either)."""
    labels = {channel_speaker(channel): channel for channel in (0, 1)}
    found = {speaker: labels[speaker] for speaker in spans if speaker in labels}
    names = [speaker for speaker in spans if speaker not in labels]
    if not names:
        return found
    power = [
        np.square(_loudness(Path(path), track=track, channel=channel, duration=duration))
        for channel in (0, 1)
    ]
    level = [max(float(p.mean()), 1e-12) if p.size else 1e-12 for p in power]
    for speaker in names:
        louder = [0.0, 0.0]
        for start, end in spans[speaker]:
            frames = slice(int(start / ENVELOPE_SECONDS), int(np.ceil(end / ENVELOPE_SECONDS)))
            for channel in (0, 1):
                louder[channel] += float(power[channel][frames].sum()) / level[channel]
        found[speaker] = int(louder[1] > louder[0])
    return found


def channel_loudness(info: MediaInfo, *, track: int, channel: int) -> np.ndarray:
    """:func:`loudness_envelope` of one whole channel of the probed file, decoded in
    bounded chunks."""
    return _loudness(info.path, track=track, channel=channel, duration=info.duration)


def _loudness(path: Path, *, track: int, channel: int, duration: float | None) -> np.ndarray:
    frame = int(ENVELOPE_SECONDS * SAMPLE_RATE)
    parts: list[np.ndarray] = []
    left_over = np.zeros(0, np.float32)
    for chunk in iter_audio_chunks(path, track=track, channel=channel, duration=duration):
        samples = np.concatenate([left_over, chunk.samples])
        usable = len(samples) - len(samples) % frame
        parts.append(loudness_envelope(samples[:usable]))
        left_over = samples[usable:]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def louder_only(
    segments: Iterable[Segment], own: np.ndarray, other: np.ndarray
) -> Iterator[Segment]:
    """``segments`` heard on the channel whose :func:`channel_loudness` is ``own``,
    keeping only the words where, in some 50 ms of sound, it is not more than
    :data:`LEAK_MARGIN_DB` quieter than the ``other`` channel (a segment without word
    times: as a whole).

    A leak is the other voice scaled down, so under the other channel in every 50 ms;
    a word said while the other person talks too rises above them somewhere. Compared
    over the whole word instead, a louder voice talking over it hid it: with turns
    overlapping 2.5 s, 0.07-0.11 less of the reader's words were kept (``--margins``).
    """
    level = 10 ** (LEAK_MARGIN_DB / 10)

    def louder(start: float, end: float) -> bool:
        first = int(start / ENVELOPE_SECONDS)
        span = slice(first, max(int(np.ceil(end / ENVELOPE_SECONDS)), first + 1))
        size = min(own[span].size, other[span].size)
        mine, theirs = np.square(own[span][:size]), np.square(other[span][:size])
        loudest = np.maximum(mine, theirs)
        sound = loudest >= loudest.max(initial=0.0) * SOUND_SHARE
        return bool(np.any(mine[sound] * level >= theirs[sound])) or not size

    for segment in segments:
        if not segment.words:
            if louder(segment.start, segment.end):
                yield segment
            continue
        kept = tuple(word for word in segment.words if louder(word.start, word.end))
        if len(kept) == len(segment.words):
            yield segment
        elif kept:
            yield _of_words(segment, kept)


def _of_words(segment: Segment, words: tuple[Word, ...]) -> Segment:
    """``segment`` cut down to ``words`` (spaced as its text is)."""
    space = " " if " " in segment.text.strip() else ""
    text = space.join(word.text for word in words)
    return replace(segment, start=words[0].start, end=words[-1].end, text=text, words=words)
