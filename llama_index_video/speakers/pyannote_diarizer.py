"""The reference speaker backend: a pyannote-audio pipeline from the model hub.

pyannote's pretrained pipelines are gated on the Hugging Face hub: the user accepts
their terms once and passes an access token, read from ``token=`` or the
``HF_TOKEN`` environment variable. The token is handed to pyannote only; it never
appears in errors or logs. The pipeline loads on first use and is cached per model.
pyannote diarizes a whole waveform at once, so the chunks are joined in memory
(about 230 MB per hour of audio).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from llama_index_video.api_keys import read_api_key
from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
from llama_index_video.model_cache import ModelCache
from llama_index_video.speakers.base import (
    SpeakerTurn,
    check_speaker_counts,
    failures_named,
    name_in_order,
)

DEFAULT_PYANNOTE_MODEL = "pyannote/speaker-diarization-community-1"
TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")

_pipelines: ModelCache[str, Any] = ModelCache()


class PyannoteDiarizer:
    """Speaker turns from a pyannote-audio diarization pipeline.

    Args:
        model: The pipeline's hub name (or a local folder with its ``config.yaml``).
        token: Hub access token; None reads ``HF_TOKEN`` (or ``HUGGING_FACE_HUB_TOKEN``).
        num_speakers: How many speakers there are, if known.
        max_speakers: The most speakers pyannote may find when estimating.
        device: Torch device to run the pipeline on.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_PYANNOTE_MODEL,
        token: str | None = None,
        num_speakers: int | None = None,
        max_speakers: int | None = None,
        device: str = "cpu",
    ) -> None:
        check_speaker_counts(num_speakers, max_speakers)
        self.model = model
        self.num_speakers = num_speakers
        self.max_speakers = max_speakers
        self.device = device
        self._token = token

    @property
    def name(self) -> str:
        return "pyannote"

    def __repr__(self) -> str:  # never shows the token
        return f"PyannoteDiarizer(model={self.model!r}, num_speakers={self.num_speakers})"

    def diarize(
        self, chunks: Iterable[AudioChunk], *, source: Path | None = None
    ) -> list[SpeakerTurn]:
        """Who spoke when, by the pipeline; see the module docstring."""
        pipeline = self._pipeline()
        samples = [chunk.samples for chunk in chunks]
        if not samples:
            return []
        import torch

        waveform = torch.from_numpy(np.concatenate(samples)).unsqueeze(0)
        options = {
            key: value
            for key, value in (
                ("num_speakers", self.num_speakers),
                ("max_speakers", self.max_speakers),
            )
            if value is not None
        }
        with failures_named(f"pyannote pipeline {self.model}", source):
            output = pipeline({"waveform": waveform, "sample_rate": SAMPLE_RATE}, **options)
        return turns_from_annotation(output)

    def _pipeline(self) -> Any:
        token = read_api_key(self._token, TOKEN_VARIABLES)  # registered for scrub()
        if not token and not Path(self.model).is_dir():
            raise DiarizationError(
                f"pyannote model {self.model} is gated on the Hugging Face hub: accept its "
                "terms on the model page, then pass token= or set HF_TOKEN "
                "(or use the offline default, CampplusDiarizer)"
            )
        return _pipelines.load(self.model, lambda: _load(self.model, token, self.device))


def turns_from_annotation(output: Any) -> list[SpeakerTurn]:
    """Turns from a pyannote ``Annotation``, or a 4.x output holding one.

    pyannote 4 returns an object whose ``speaker_diarization`` is the annotation;
    pyannote 3 returns the annotation itself.
    """
    annotation = getattr(output, "speaker_diarization", output)
    return name_in_order(_tracks(annotation))


def _tracks(annotation: Any) -> Iterator[tuple[float, float, object]]:
    for segment, _, label in annotation.itertracks(yield_label=True):
        yield float(segment.start), float(segment.end), label


def _load(model: str, token: str | None, device: str) -> Any:
    try:
        from pyannote.audio import Pipeline
    except ImportError as exc:
        raise MissingDependencyError(
            "pyannote.audio",
            "speakers",
            "Speaker labels with pyannote",
            install="pip install pyannote.audio",
        ) from exc
    try:
        try:
            pipeline = Pipeline.from_pretrained(model, token=token)
        except TypeError:  # pyannote 3.x names the argument differently
            pipeline = Pipeline.from_pretrained(model, use_auth_token=token)
    except Exception as exc:
        raise DiarizationError(
            f"cannot load pyannote model {model} ({type(exc).__name__}); check the model "
            "name, that the token's account accepted its terms, and the network"
        ) from exc
    if pipeline is None:  # pyannote 3 returns None when the hub refuses
        raise DiarizationError(
            f"the hub refused pyannote model {model}: accept its terms with the token's account"
        )
    import torch

    pipeline.to(torch.device(device))
    return pipeline
