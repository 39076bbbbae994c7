"""Matroska files made at test time from real speech: several audio tracks, a subtitle
track of given cues, as other encoders write them (the new user's trial of issue 36)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from tests.fixtures.make_speech import add_subtitle_stream, mux_cues

RATE = 16_000


def read_speech(path: Path) -> np.ndarray:
    """A fixture recording as 16 kHz mono float32."""
    from llama_index_video.media.audio import decode_audio

    return decode_audio(path)


def write_mkv(
    path: Path,
    tracks: Sequence[np.ndarray],
    *,
    languages: Sequence[str] = (),
    titles: Sequence[str] = (),
    cues: Sequence[tuple[float, float, str]] = (),
) -> Path:
    """Write FLAC audio tracks (16 kHz; a 1-D array is mono, ``(2, n)`` stereo), each
    tagged with its language and title when given, and a SubRip track of ``cues`` when any."""
    with av.open(str(path), "w") as out:
        streams = []
        for index, samples in enumerate(tracks):
            planes = samples.reshape(1, -1) if samples.ndim == 1 else samples
            layout = "mono" if len(planes) == 1 else "stereo"
            stream = out.add_stream("flac", rate=RATE, layout=layout)
            if index < len(languages):
                stream.metadata["language"] = languages[index]
            if index < len(titles):
                stream.metadata["title"] = titles[index]
            streams.append((stream, planes, layout))
        subtitles = add_subtitle_stream(out, "subrip") if cues else None
        out.start_encoding()
        for stream, planes, layout in streams:
            pcm = (np.clip(planes, -1, 1) * 32767).astype(np.int16).T.reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(pcm.copy(), format="s16", layout=layout)
            frame.sample_rate = RATE
            frame.pts = 0
            frame.time_base = Fraction(1, RATE)
            for packet in [*stream.encode(frame), *stream.encode(None)]:
                out.mux(packet)
        if subtitles is not None:
            mux_cues(out, subtitles, cues)
    return path
