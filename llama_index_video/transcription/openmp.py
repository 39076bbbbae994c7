"""Importing faster-whisper, with its engine's OpenMP threads set to wait briefly.

faster-whisper runs on CTranslate2, whose wheel bundles its own libgomp. libgomp reads
how its threads wait for each other from the environment once, when it loads, and its
defaults fit neither way a model gets loaded (2-core Intel Xeon, speech recognition of
the two example videos; ``benchmarks/transcription_threads.py``):

- Model loaded by the thread that then transcribes (the CLI, a script): that thread's
  idle OpenMP pool makes libgomp count more threads than CPUs, so a waiting thread spins
  100 times and then sleeps in the kernel. Each layer of the decoder then pays a wake-up:
  5.3 s, 6.2 CPU s.
- Model loaded by another thread (an app's worker thread, the service): a waiting thread
  spins 300,000 times first. 2.2 s on a quiet machine, but 28-73 s beside one or two busy
  processes, where the spinning thread holds the core its partner needs.

``OMP_WAIT_POLICY=ACTIVE`` with ``GOMP_SPINCOUNT=1000`` makes both 1,000 spins: 2.3 s and
3.9 CPU s on a quiet machine, 4.3-4.9 CPU s beside one or two busy processes, whichever
thread loaded the model. 500 spins was nearly as slow as 100. The threads only wait differently:
the transcripts are the same.

Changing the environment is safe only while no other thread may read it (glibc's
``getenv`` takes no lock), so the import happens early: when a
``FasterWhisperTranscriber`` is built, and in ``VideoReader`` before a file's screen
thread starts.
"""

from __future__ import annotations

import os
import sys
import threading
from types import ModuleType
from typing import Final

from llama_index_video.errors import MissingDependencyError

BRIEF_SPINNING: Final = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "1000"}
_lock = threading.Lock()


def import_faster_whisper() -> ModuleType:
    """The ``faster_whisper`` module, its CTranslate2 threads set to spin briefly.

    The setting applies when this import is the first of CTranslate2 in the process and
    the environment sets neither variable (a user's own setting stands). The environment
    is restored right after, so child processes and other OpenMP runtimes never see it.

    Raises:
        MissingDependencyError: faster-whisper is not installed.
    """
    with _lock:
        settled = "ctranslate2" in sys.modules or any(name in os.environ for name in BRIEF_SPINNING)
        if not settled:
            os.environ.update(BRIEF_SPINNING)
        try:
            import faster_whisper
        except ImportError as exc:
            raise MissingDependencyError("faster-whisper", "local", "Local transcription") from exc
        finally:
            if not settled:
                for name in BRIEF_SPINNING:
                    del os.environ[name]
    return faster_whisper
