"""An index of one silent recording with a subtitle file of known cues: what the exact-word
tests search, with no speech recognition involved."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader


@contextmanager
def subtitled_silence(
    folder: Path,
    cues: Sequence[tuple[float, float, str]],
    *,
    subtitles: str,
    make_wav: Callable[[Path, np.ndarray], Path],
    embed_model: object,
) -> Iterator[tuple[VideoIndex, Path]]:
    """``folder/index`` holding ``folder/talk.wav`` (silence to the last cue's end and 4 s
    more) with the subtitle file ``talk.<subtitles>`` of ``cues`` (start, end, text) beside
    it; yields the index and the recording, and closes the index."""
    seconds = int(max(end for _, end, _ in cues)) + 4
    audio = make_wav(folder / "talk.wav", np.zeros(seconds * 16_000, np.float32))
    (folder / f"talk.{subtitles}").write_text(
        "\n".join(
            f"{n}\n00:00:{start:02.0f},000 --> 00:00:{end:02.0f},000\n{text}\n"
            for n, (start, end, text) in enumerate(cues, start=1)
        ),
        encoding="utf-8",
    )
    reader = VideoReader(media_dir=folder / "media", frames=None)
    index = VideoIndex(folder / "index", embed_model=embed_model, reader=reader)
    try:
        assert index.ingest([audio]).ok
        yield index, audio
    finally:
        index.close()
